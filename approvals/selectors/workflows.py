"""Workflows as people and auditors see them."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError

from templates_engine.snapshot import state_from_dict

from .. import access
from ..audit.archived import ArchivedState, archived_rows, usernames, when, workflow_archived
from ..models import (
    ActivityAttempt,
    PendingTask,
    Timer,
    User,
    Workflow,
    WorkflowEvent,
    history_month,
)


def workflow_get(*, user: User, workflow_id: uuid.UUID | str) -> Workflow | None:
    """The workflow if ``user`` may read it (approvals.access); None otherwise, also
    for another organisation's workflow."""
    readable = workflow_get_readable(user=user, workflow_id=workflow_id)
    return readable.workflow if readable is not None else None


def workflow_get_readable(
    *, user: User, workflow_id: uuid.UUID | str
) -> access.ReadableWorkflow | None:
    """``workflow_get`` as the read rule's answer, for a request that goes on to a
    service (which takes it instead of asking again)."""
    try:
        return access.workflow_read(user, workflow_id, related=("template", "submitter"))
    except (ValueError, TypeError, DjangoValidationError):
        return None


@dataclass(frozen=True)
class HistoryEntry:
    seq: int
    type: str
    actor: str | None
    role: str
    on_behalf_of: str | None
    at: dt.datetime
    comment: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class RestartLinks:
    """A rolled-back workflow started again is a new workflow: each names the other."""

    restarted_from: str | None  # the rolled-back workflow this one replaces
    restarted_as: str | None  # the new workflow that replaced this one


def workflow_restart_links(*, history: list[HistoryEntry]) -> RestartLinks:
    """The restart links recorded in a workflow's ``history`` (``workflow_history``)."""
    restarted_from = restarted_as = None
    for entry in history:
        if entry.type == "WorkflowStarted":
            origin = entry.payload.get("origin") or {}
            restarted_from = origin.get("restarted_from")
        elif entry.type == "WorkflowRestarted":
            restarted_as = entry.payload.get("restarted_as")
    return RestartLinks(restarted_from, restarted_as)


def workflow_history(*, workflow: Workflow) -> list[HistoryEntry]:
    """The workflow's events in order, from the database or, once its month is
    archived, from the archive store (approvals.audit.archived), read the same way."""
    archived = workflow_archived(tenant_id=workflow.tenant_id, workflow_id=workflow.pk)
    if archived is not None:
        return _archived_history(archived)
    rows = (
        WorkflowEvent.objects.filter(
            workflow_id=workflow.pk, history_month=history_month(workflow.created_at)
        )
        .order_by("seq")
        .values_list(
            "seq",
            "type",
            "actor__username",
            "role",
            "on_behalf_of__username",
            "created_at",
            "payload",
        )
    )
    return [
        HistoryEntry(seq, type_, actor, role, behalf, at, payload.get("comment", ""), payload)
        for seq, type_, actor, role, behalf, at, payload in rows
    ]


def _archived_history(archived: ArchivedState) -> list[HistoryEntry]:
    if archived.deleted:
        return []
    rows = archived_rows(archived.entry)
    names = usernames(rows)
    entries = []
    for row in rows:
        payload = row["payload"] if isinstance(row["payload"], dict) else {}
        entries.append(
            HistoryEntry(
                row["seq"],
                row["type"],
                names.get(row["actor_id"]) if row["actor_id"] is not None else None,
                row["role"],
                names.get(row["on_behalf_of_id"]) if row["on_behalf_of_id"] is not None else None,
                when(row),
                payload.get("comment", ""),
                payload,
            )
        )
    return entries


def workflow_assignees(*, workflow: Workflow) -> list[dict[str, str | None]]:
    state = state_from_dict(workflow.snapshot) if workflow.snapshot else None
    if state is None:
        return []
    return (
        [{"user": a.user, "onBehalfOf": a.on_behalf_of} for a in state.outstanding()]
        if state.step and state.status == "RUNNING"
        else []
    )


@dataclass(frozen=True)
class OpenAssignment:
    user: str
    on_behalf_of: str | None
    due_at: dt.datetime
    since: dt.datetime


@dataclass(frozen=True)
class OpenStep:
    step: str
    assignees: list[OpenAssignment]


@dataclass(frozen=True)
class AttemptView:
    attempt: int
    not_before: dt.datetime
    started_at: dt.datetime | None
    lease_until: dt.datetime | None
    finished_at: dt.datetime | None
    outcome: str | None
    error: str | None
    message: str | None


@dataclass(frozen=True)
class RunningActivity:
    step: str
    activity: str
    undo: bool
    round: int
    idempotency_key: str
    attempts: list[AttemptView]


@dataclass(frozen=True)
class WorkflowNow:
    """What a caller needs to act on a workflow without reading its history: who must
    decide what by when, what wakes it next, and how its running activity is doing."""

    open_steps: list[OpenStep]
    next_timer: Timer | None
    activity: RunningActivity | None


def workflow_now(*, workflow: Workflow, history: list[HistoryEntry]) -> WorkflowNow:
    """Read from the projections (tasks, timers, the activity outbox); the attempts'
    error messages come from ``history`` (``workflow_history``), already at hand."""
    return WorkflowNow(
        open_steps=_open_steps(workflow),
        next_timer=Timer.objects.filter(
            workflow_id=workflow.pk, fired_at__isnull=True, dead_at__isnull=True
        )
        .order_by("fire_at", "pk")
        .first(),
        activity=_running_activity(workflow, history),
    )


def _open_steps(workflow: Workflow) -> list[OpenStep]:
    tasks = (
        PendingTask.objects.filter(workflow_id=workflow.pk)
        .order_by("step", "due_at", "assignee__username")
        .values_list("step", "assignee__username", "on_behalf_of", "due_at", "created_at")
    )
    steps: dict[str, list[OpenAssignment]] = {}
    for step, user, behalf, due_at, since in tasks:
        steps.setdefault(step, []).append(OpenAssignment(user, behalf or None, due_at, since))
    return [OpenStep(step, assignees) for step, assignees in steps.items()]


def _running_activity(workflow: Workflow, history: list[HistoryEntry]) -> RunningActivity | None:
    state = state_from_dict(workflow.snapshot) if workflow.snapshot else None
    pending = state.activity if state is not None else None
    if pending is None:
        return None
    rows = list(
        ActivityAttempt.objects.filter(
            workflow_id=workflow.pk, step=pending.step, undo=pending.undo, round=pending.round
        ).order_by("attempt")
    )
    errors = _round_errors(history, pending.step, pending.undo, pending.round)
    return RunningActivity(
        step=pending.step,
        activity=pending.activity,
        undo=pending.undo,
        round=pending.round,
        idempotency_key=rows[0].idempotency_key if rows else "",
        attempts=[
            AttemptView(
                attempt=row.attempt,
                not_before=row.not_before,
                started_at=row.dispatched_at,
                lease_until=row.lease_until,
                finished_at=row.finished_at,
                outcome=row.outcome or None,
                error=errors.get(row.attempt, (None, None))[0],
                message=errors.get(row.attempt, (None, None))[1],
            )
            for row in rows
        ],
    )


def _round_errors(
    history: list[HistoryEntry], step: str, undo: bool, round_: int
) -> dict[int, tuple[str, str]]:
    """attempt -> (error, message) of one round: the failures after the round's first
    ActivityScheduled (a round's attempts follow each other; the next round of the
    step starts with its own ActivityScheduled)."""
    errors: dict[int, tuple[str, str]] = {}
    in_round = False
    for entry in history:
        p = entry.payload
        if p.get("step") != step or bool(p.get("undo", False)) != undo:
            continue
        if entry.type == "ActivityScheduled":
            in_round = p.get("round", 1) == round_
        elif entry.type == "ActivityFailed" and in_round:
            errors[p["attempt"]] = (p["error"], p.get("message", ""))
    return errors
