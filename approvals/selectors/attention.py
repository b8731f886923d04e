"""What needs a person in an organisation: workflows whose roll-back failed, timers
parked after failing to fire, activity attempts that keep failing, and tasks past
their due time. Oldest first, so what has waited longest is dealt with first."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.db.models import Min, Q, QuerySet

from .. import access, clock
from ..models import (
    ActivityAttempt,
    Delegation,
    PendingTask,
    Timer,
    Workflow,
    WorkflowStatus,
    WorkflowTemplate,
    time_bounds,
)
from .templates import workflow_template_problems

ROLLBACK_FAILED = "rollback_failed"
TIMER_PARKED = "timer_parked"
ATTEMPTS_FAILING = "attempts_failing"
TASK_OVERDUE = "task_overdue"

# Per kind: a page a person reads, not an export.
LIMIT = 200


@dataclass(frozen=True)
class AttentionItem:
    kind: str
    since: dt.datetime
    workflow: Workflow
    step: str
    # kind-specific: the error, the failures, the assignee ...
    detail: dict[str, Any]


def _scoped(user: Any, qs: QuerySet[Any]) -> QuerySet[Any]:
    return access.admin_scope(user, qs)


def attention_list(*, user: Any, limit: int = LIMIT) -> list[AttentionItem]:
    """Everything that needs a person in ``user``'s organisation, oldest first."""
    items = [
        *_rollbacks_failed(user, limit),
        *_timers_parked(user, limit),
        *_attempts_failing(user, limit),
        *_tasks_overdue(user, limit),
    ]
    return sorted(items, key=lambda i: (i.since, i.kind, str(i.workflow.pk)))


def attention_by_request(*, user: Any, limit: int = LIMIT) -> list[AttentionItem]:
    """As ``attention_list``, one item per request and kind of trouble: the overdue
    tasks of one request (a group's step asks several people) are one item whose
    ``detail["assignees"]`` names each of them, in the order they fell due."""
    out: list[AttentionItem] = []
    overdue: dict[uuid.UUID, AttentionItem] = {}
    for item in attention_list(user=user, limit=limit):
        if item.kind != TASK_OVERDUE:
            out.append(item)
            continue
        first = overdue.get(item.workflow.pk)
        if first is None:
            merged = AttentionItem(
                TASK_OVERDUE, item.since, item.workflow, item.step, {"assignees": []}
            )
            overdue[item.workflow.pk] = first = merged
            out.append(merged)
        if item.detail["assignee"] not in first.detail["assignees"]:
            first.detail["assignees"].append(item.detail["assignee"])
    return out


def _rollbacks_failed(user: Any, limit: int) -> list[AttentionItem]:
    qs = _scoped(user, Workflow.objects.select_related("template", "submitter")).filter(
        status=WorkflowStatus.COMPENSATION_FAILED
    )
    # settled by hand or by retried undos: nothing left for a person
    qs = qs.exclude(snapshot__settled=True)
    out = []
    for wf in qs.order_by("updated_at")[:limit]:
        snapshot = wf.snapshot or {}
        compensations = snapshot.get("compensations") or []
        step = compensations[-1][0] if compensations else ""
        out.append(
            AttentionItem(
                ROLLBACK_FAILED, wf.updated_at, wf, step, {"error": snapshot.get("error") or ""}
            )
        )
    return out


def _timers_parked(user: Any, limit: int) -> list[AttentionItem]:
    qs = _scoped(user, Timer.objects.select_related("workflow__template", "workflow__submitter"))
    qs = qs.filter(dead_at__isnull=False, fired_at__isnull=True).order_by("dead_at")
    return [
        AttentionItem(
            TIMER_PARKED,
            t.dead_at,
            t.workflow,
            t.step,
            {"timer": t, "kind": t.kind, "failures": t.failures, "error": t.last_error},
        )
        for t in qs[:limit]
    ]


def _attempts_failing(user: Any, limit: int) -> list[AttentionItem]:
    """Open attempts after at least one failed attempt of the same round."""
    qs = _scoped(user, ActivityAttempt.objects.select_related("workflow__template"))
    open_retries = qs.filter(finished_at__isnull=True, attempt__gt=1).order_by("not_before")
    rows = list(open_retries[:limit])
    if not rows:
        return []
    firsts = {
        (r["workflow_id"], r["step"], r["undo"], r["round"]): (r["first"], r["last_outcome"])
        for r in ActivityAttempt.objects.filter(
            Q(workflow_id__in=[a.workflow_id for a in rows]),
            finished_at__isnull=False,
        )
        .exclude(outcome="ok")
        .values("workflow_id", "step", "undo", "round")
        .annotate(first=Min("finished_at"), last_outcome=Min("outcome"))
    }
    out = []
    for a in rows:
        first, outcome = firsts.get((a.workflow_id, a.step, a.undo, a.round), (None, ""))
        out.append(
            AttentionItem(
                ATTEMPTS_FAILING,
                first or a.not_before,
                a.workflow,
                a.step,
                {
                    "activity": a.activity,
                    "undo": a.undo,
                    "failed": a.attempt - 1,
                    "next_at": a.not_before,
                    "error": outcome,
                },
            )
        )
    return out


def _tasks_overdue(user: Any, limit: int) -> list[AttentionItem]:
    qs = _scoped(user, PendingTask.objects.select_related("workflow__template", "assignee")).filter(
        due_at__lt=clock.now()
    )
    return [
        AttentionItem(TASK_OVERDUE, t.due_at, t.workflow, t.step, {"assignee": t.assignee})
        for t in qs.order_by("due_at")[:limit]
    ]


@dataclass(frozen=True)
class UnreadableDelegation:
    """An out-of-office whose times lie outside 1970..2200 (stored before the database
    refused them): the directory skips it, so tasks go to the absent person."""

    id: int
    user: str
    delegate: str


def delegations_unreadable(*, user: Any, limit: int = LIMIT) -> list[UnreadableDelegation]:
    """Out-of-office rows the directory skips, in ``user``'s organisation. Their times
    are compared in the database, never read: they may not be readable."""
    in_range = Q(starts_at__gte=time_bounds.EARLIEST_MOMENT) & Q(
        ends_at__lte=time_bounds.LATEST_MOMENT
    )
    rows = _scoped(user, Delegation.objects.exclude(in_range)).order_by("pk")
    names = rows.values_list("pk", "user__username", "delegate__username")
    return [UnreadableDelegation(*row) for row in names[:limit]]


@dataclass(frozen=True)
class TemplateNamingAbsent:
    """The newest version of a workflow template names, as an approver, someone who
    can no longer act (deactivated, or an auditor or integration account since):
    that step finds nobody to ask."""

    title: str
    version: int
    problem: str


def templates_naming_absent(*, user: Any, limit: int = LIMIT) -> list[TemplateNamingAbsent]:
    """In ``user``'s organisation, each problem with a person named by the newest
    version of a workflow template that takes new workflows."""
    newest: dict[tuple[int, str], WorkflowTemplate] = {}
    rows = _scoped(user, WorkflowTemplate.objects.all()).order_by("tenant_id", "key", "-version")
    for template in rows:
        newest.setdefault((template.tenant_id, template.key), template)
    out = []
    for template in newest.values():
        if template.retired_at is not None:
            continue
        for problem in workflow_template_problems(
            tenant_id=template.tenant_id, doc=template.definition
        ):
            if problem.path.endswith(".user"):
                title = template.title or template.key
                out.append(TemplateNamingAbsent(title, template.version, problem.problem))
    return out[:limit]


def workflow_parked_timers(*, workflow_id: uuid.UUID) -> list[Timer]:
    return list(
        Timer.objects.filter(
            workflow_id=workflow_id, dead_at__isnull=False, fired_at__isnull=True
        ).order_by("dead_at")
    )


def workflow_open_tasks(*, workflow_id: uuid.UUID) -> list[PendingTask]:
    return list(
        PendingTask.objects.filter(workflow_id=workflow_id)
        .select_related("assignee")
        .order_by("assignee__username")
    )
