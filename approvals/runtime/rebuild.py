"""Read models rebuilt from the events alone: the inbox (pending tasks), the pending
timers, the open activity attempts, the participants and the workflow's search
fields (status, public status, current step, data, snapshot, version, last hash, and
the inbox's summary line and amount).

Each workflow's history is replayed under its pinned workflow template version, one
command at a time (the events a command appended share its time), applying the same
rules the command path's projections apply, so the rebuilt rows equal the live ones:
a task's due time and creation time are those of the command that assigned it. Work
queue bookkeeping that no event records (a timer's failed fires, an attempt's lease)
is kept where the row is kept. ``read_models`` gives the rows as comparable sets, for
``rebuild_read_models --check`` and the tests.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from templates_engine import State, evolve, public_status
from templates_engine import events as ev
from templates_engine.events import event_from_dict
from templates_engine.keys import activity_key
from templates_engine.snapshot import state_to_dict
from templates_engine.status import StatusMoveRefused, status_of_public

from .. import clock
from ..definitions import definition_for
from ..models import (
    ActivityAttempt,
    PendingTask,
    StepVisit,
    Timer,
    Workflow,
    WorkflowEvent,
    WorkflowParticipant,
    history_month,
)
from ..words.data import workflow_summary
from .analytics import VISIT_FIELDS, Visit, visit_id, visit_values, visits_apply
from .directory import TenantDirectory
from .projections import TASK_FACTS, _open_tasks, handed_on_marks, people_named, task_facts
from .rollup import rollup_refresh

# assignee, step, behalf, due, created, handed on from
# assignee, step, behalf, due, created, handed on from, then ``TASK_FACTS``
TaskRow = tuple[Any, ...]
TaskValue = tuple[str, str, dt.datetime, dt.datetime, str]  # behalf, step, due, created, from
TimerRow = tuple[str, str, str, dt.datetime]  # key, step, kind, fire_at
AttemptRow = tuple[str, bool, int, int, str, str, str, dt.datetime, float]


@dataclass
class Derived:
    """What one workflow's read models must hold, according to its events."""

    state: State
    version: int
    last_hash: str
    tasks: dict[str, TaskValue]  # user -> behalf, step, due, created, handed on from
    timers: dict[str, TimerRow]
    participants: set[str]
    rearmed: set[str] = field(default_factory=set)
    visits: dict[int, Visit] = field(default_factory=dict)  # entry -> step visit


@dataclass
class RebuildReport:
    workflows: int = 0
    changed: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("tasks", "timers", "attempts", "participants", "workflow", "visits"), 0
        )
    )


def _commands(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[dt.datetime, list[ev.Event]]]:
    """The history as the commands that wrote it: events sharing a time."""
    for at, group in itertools.groupby(rows, key=lambda r: r[1]):
        yield at, [event_from_dict(r[0]) for r in group]


def derive(wf: Workflow) -> Derived:
    """Replay ``wf``'s history and apply the projections' rules command by command."""
    rows = list(
        WorkflowEvent.objects.filter(workflow_id=wf.pk, history_month=history_month(wf.created_at))
        .order_by("seq")
        .values_list("payload", "created_at", "hash")
    )
    return derive_commands(
        wf.template_id, _commands(rows), version=len(rows), last_hash=rows[-1][2] if rows else ""
    )


def derive_commands(
    template_id: int,
    commands: Iterable[tuple[dt.datetime, Sequence[ev.Event]]],
    *,
    version: int,
    last_hash: str,
) -> Derived:
    """``derive`` over a history given as its commands (time, events): also what a
    generator of histories (bench/scale_fill.py) projects its workflows with."""
    state = State()
    tasks: dict[str, TaskValue] = {}
    rearmed_at: dict[str, dt.datetime] = {}
    named: set[str] = set()
    visits: dict[int, Visit] = {}
    default_due = dt.timedelta(seconds=settings.APPROVALS_DEFAULT_TASK_DUE_SECONDS)
    for now, events in commands:
        old = state
        for event in events:
            state = evolve(state, event)
            if isinstance(event, ev.TimerRearmed):
                rearmed_at[event.key] = now
        named |= people_named(events)
        _apply_tasks(tasks, old, state, now, default_due, events)
        visits_apply(visits, template_id, old, state, events, now)
    timers = {
        t.key: (t.key, t.step, t.kind, rearmed_at.get(t.key, clock.from_epoch(t.fire_at)))
        for t in state.timers
    }
    return Derived(
        state=state,
        version=version,
        last_hash=last_hash,
        tasks=tasks,
        timers=timers,
        participants=named,
        rearmed=set(rearmed_at) & set(timers),
        visits=visits,
    )


def _apply_tasks(
    tasks: dict[str, TaskValue],
    old: State,
    new: State,
    now: dt.datetime,
    default_due: dt.timedelta,
    events: Sequence[ev.Event] = (),
) -> None:
    """The inbox rule of ``projections._project_tasks``, on a dict."""
    before, after = _open_tasks(old), _open_tasks(new)
    same_step = old.step == new.step and old.entries == new.entries
    if before == after and same_step:
        return
    if same_step:
        for user, behalf in before.items():
            if after.get(user) != behalf:
                tasks.pop(user, None)
        added = {user: behalf for user, behalf in after.items() if before.get(user) != behalf}
    else:
        tasks.clear()
        added = after
    due = clock.from_epoch(new.due_at) if new.due_at is not None else now + default_due
    for user, behalf in added.items():
        tasks[user] = (behalf, new.step or "", due, now, "")
    for user, leaver in handed_on_marks(new, events).items():
        if user in tasks:
            tasks[user] = (*tasks[user][:4], leaver)


# -- the rows ---------------------------------------------------------------------------


def _task_rows(wf: Workflow, d: Derived, directory: TenantDirectory) -> set[TaskRow]:
    if not d.tasks:
        return set()
    ids = directory.user_ids(d.tasks)  # the inbox holds active people
    summary, _ = workflow_summary(definition_for(wf.template_id), wf.subject_id, d.state.data)
    facts = task_facts(wf, summary, d.state.data, d.state.submitter, directory)
    return {
        (ids[user], step, behalf, due, created, leaver, *facts)
        for user, (behalf, step, due, created, leaver) in d.tasks.items()
        if user in ids
    }


def _attempt_row(wf: Workflow, d: Derived) -> set[AttemptRow]:
    a = d.state.activity
    if a is None:
        return set()
    key = activity_key(str(wf.pk), a.step, a.undo, a.round)
    return {
        (
            a.step,
            a.undo,
            a.round,
            a.attempt,
            a.activity,
            a.queue,
            key,
            clock.from_epoch(a.not_before),
            float(a.timeout),
        )
    }


def _search_fields(d: Derived) -> dict[str, Any]:
    s = d.state
    return {
        "status": s.status,
        "public_status": public_status(s),
        "current_step": s.step or "",
        "data": dict(s.data),
        # as the JSON column reads back (lists, not tuples)
        "snapshot": json.loads(json.dumps(state_to_dict(s))) if d.version else {},
        "version": d.version,
        "last_hash": d.last_hash,
    }


def live_rows(wf: Workflow) -> dict[str, Any]:
    """The read-model rows of ``wf`` as stored now, comparable with ``derived_rows``."""
    return {
        "tasks": set(
            PendingTask.objects.filter(workflow_id=wf.pk).values_list(
                "assignee_id",
                "step",
                "on_behalf_of",
                "due_at",
                "created_at",
                "handed_on_from",
                *TASK_FACTS,
            )
        ),
        "timers": set(
            Timer.objects.filter(workflow_id=wf.pk, fired_at__isnull=True).values_list(
                "key", "step", "kind", "fire_at"
            )
        ),
        "attempts": set(
            ActivityAttempt.objects.filter(workflow_id=wf.pk, finished_at__isnull=True).values_list(
                "step",
                "undo",
                "round",
                "attempt",
                "activity",
                "queue",
                "idempotency_key",
                "not_before",
                "timeout_seconds",
            )
        ),
        "participants": set(
            WorkflowParticipant.objects.filter(workflow_id=wf.pk).values_list("user_id", flat=True)
        ),
        "workflow": Workflow.objects.filter(pk=wf.pk).values(*SEARCH_FIELDS).get(),
        "visits": {
            (*row[:-1], json.dumps(row[-1], sort_keys=True))
            for row in StepVisit.objects.filter(
                tenant_id=wf.tenant_id, workflow_id=wf.pk
            ).values_list(*VISIT_FIELDS)
        },
    }


def _visit_rows(wf: Workflow, d: Derived) -> set[tuple[Any, ...]]:
    return {
        (*row[:-1], json.dumps(row[-1], sort_keys=True))
        for row in (visit_values(wf, v) for v in d.visits.values())
    }


SEARCH_FIELDS = (
    "status",
    "public_status",
    "current_step",
    "data",
    "snapshot",
    "version",
    "last_hash",
    "summary",
    "amount_display",
)


def derived_rows(
    wf: Workflow, d: Derived | None = None, directory: TenantDirectory | None = None
) -> dict[str, Any]:
    """The read-model rows ``wf``'s events call for (``directory``: one that may keep
    its answers across workflows, given a directory version)."""
    d = d or derive(wf)
    directory = directory or TenantDirectory(wf.tenant_id)
    return {
        "tasks": _task_rows(wf, d, directory),
        "timers": set(d.timers.values()),
        "attempts": _attempt_row(wf, d),
        "participants": set(directory.user_ids_any(d.participants).values()),
        "workflow": {**_search_fields(d), **_summary_fields(wf, d)},
        "visits": _visit_rows(wf, d),
    }


def _summary_fields(wf: Workflow, d: Derived) -> dict[str, str]:
    """The inbox's summary line and amount, from the data the events set, under the
    workflow's pinned workflow template version (as the command path projects them)."""
    summary, amount = workflow_summary(definition_for(wf.template_id), wf.subject_id, d.state.data)
    return {"summary": summary, "amount_display": amount}


# -- writing ------------------------------------------------------------------------------


def workflow_rebuild(*, workflow_id: uuid.UUID, report: RebuildReport | None = None) -> bool:
    """Rebuild one workflow's read models under its row lock; True when anything was
    out of line with the events (and has been put right)."""
    report = report or RebuildReport()
    with transaction.atomic():
        wf = Workflow.objects.select_for_update(of=("self",)).get(pk=workflow_id)
        d = derive(wf)
        want, have = derived_rows(wf, d), live_rows(wf)
        changed = False
        for name, fix in _FIXES.items():
            if want[name] != have[name]:
                fix(wf, d, want[name], have[name])
                report.changed[name] += 1
                changed = True
        report.workflows += 1
    return changed


def _fix_tasks(wf: Workflow, d: Derived, want: set[TaskRow], have: set[TaskRow]) -> None:
    stale = {(r[0], r[1]) for r in have - want}
    for assignee_id, step in stale:
        PendingTask.objects.filter(workflow_id=wf.pk, assignee_id=assignee_id, step=step).delete()
    PendingTask.objects.bulk_create(
        PendingTask(
            tenant_id=wf.tenant_id,
            workflow_id=wf.pk,
            assignee_id=assignee_id,
            step=step,
            on_behalf_of=behalf,
            due_at=due,
            created_at=created,
            handed_on_from=leaver,
            **dict(zip(TASK_FACTS, facts, strict=True)),
        )
        for assignee_id, step, behalf, due, created, leaver, *facts in sorted(
            want - have, key=lambda r: (r[0], r[1])
        )
    )


def _fix_timers(wf: Workflow, d: Derived, want: set[TimerRow], have: set[TimerRow]) -> None:
    keys = {r[0] for r in want}
    Timer.objects.filter(workflow_id=wf.pk, fired_at__isnull=True).exclude(key__in=keys).delete()
    for key, step, kind, fire_at in sorted(want - have):
        values: dict[str, Any] = {"step": step, "kind": kind, "fire_at": fire_at, "fired_at": None}
        if key in d.rearmed:
            values.update(dead_at=None, failures=0, last_error="")
        Timer.objects.update_or_create(
            workflow_id=wf.pk,
            key=key,
            defaults=values,
            create_defaults={**values, "tenant_id": wf.tenant_id},
        )


def _fix_attempts(wf: Workflow, d: Derived, want: set[AttemptRow], have: set[AttemptRow]) -> None:
    now = clock.now()
    wanted = {(r[0], r[1], r[2], r[3]) for r in want}
    for step, undo, round_, attempt, *_ in have - want:
        if (step, undo, round_, attempt) not in wanted:
            ActivityAttempt.objects.filter(
                workflow_id=wf.pk, step=step, undo=undo, round=round_, attempt=attempt
            ).update(finished_at=now, outcome="abandoned")
    for step, undo, round_, attempt, activity, queue, key, not_before, timeout in want - have:
        values = {
            "activity": activity,
            "queue": queue,
            "idempotency_key": key,
            "not_before": not_before,
            "timeout_seconds": timeout,
            "finished_at": None,
            "outcome": "",
        }
        ActivityAttempt.objects.update_or_create(
            workflow_id=wf.pk,
            step=step,
            undo=undo,
            round=round_,
            attempt=attempt,
            defaults=values,
            create_defaults={**values, "tenant_id": wf.tenant_id},
        )


def _fix_participants(wf: Workflow, d: Derived, want: set[int], have: set[int]) -> None:
    WorkflowParticipant.objects.filter(workflow_id=wf.pk, user_id__in=have - want).delete()
    WorkflowParticipant.objects.bulk_create(
        WorkflowParticipant(tenant_id=wf.tenant_id, workflow_id=wf.pk, user_id=pk)
        for pk in sorted(want - have)
    )


def _fix_workflow(wf: Workflow, d: Derived, want: dict[str, Any], have: dict[str, Any]) -> None:
    # The status is derived like the rest: written as the events say, not moved
    # through a transition. The status machine (templates_engine.status) still holds:
    # ``evolve`` refused any move of the replay it does not allow, and the public
    # status must read the same status.
    if status_of_public(want["public_status"]) != want["status"]:
        raise StatusMoveRefused(
            f"workflow {wf.pk}: public status {want['public_status']} is not {want['status']}"
        )
    Workflow.objects.filter(pk=wf.pk).update(**want)


def _fix_visits(wf: Workflow, d: Derived, want: set[Any], have: set[Any]) -> None:
    StepVisit.objects.filter(tenant_id=wf.tenant_id, workflow_id=wf.pk).delete()
    StepVisit.objects.bulk_create(
        StepVisit(
            id=visit_id(wf.pk, entry),
            tenant_id=wf.tenant_id,
            workflow_id=wf.pk,
            **dict(zip(VISIT_FIELDS[1:-1], rest, strict=True)),
            entry=entry,
            dims=json.loads(dims),
        )
        for entry, *rest, dims in sorted(want, key=lambda r: r[0])
    )


_FIXES: dict[str, Callable[[Workflow, Derived, Any, Any], None]] = {
    "tasks": _fix_tasks,
    "timers": _fix_timers,
    "attempts": _fix_attempts,
    "participants": _fix_participants,
    "workflow": _fix_workflow,
    "visits": _fix_visits,
}


def read_models_rebuild(*, tenant_id: int | None = None) -> RebuildReport:
    """Rebuild every workflow's read models (of one organisation, or all), one
    workflow per transaction; then the analytics rollup, recounted from the visits."""
    report = RebuildReport()
    for workflow_id in _workflow_ids(tenant_id):
        workflow_rebuild(workflow_id=workflow_id, report=report)
    rollup_refresh(tenant_id=tenant_id)
    return report


def read_models_check(*, tenant_id: int | None = None) -> list[tuple[uuid.UUID, str]]:
    """(workflow, read model) pairs whose rows differ from what the events call for."""
    out: list[tuple[uuid.UUID, str]] = []
    for workflow_id in _workflow_ids(tenant_id):
        wf = Workflow.objects.get(pk=workflow_id)
        want, have = derived_rows(wf), live_rows(wf)
        out.extend((wf.pk, name) for name in _FIXES if want[name] != have[name])
    return out


def _workflow_ids(tenant_id: int | None) -> list[uuid.UUID]:
    qs = Workflow.objects.all()
    if tenant_id is not None:
        qs = qs.filter(tenant_id=tenant_id)
    return list(qs.order_by("created_at", "id").values_list("pk", flat=True))


def read_models_of(*, tenant_id: int | None = None) -> dict[str, set[Any]]:
    """Every read-model row of the organisation (or all), without surrogate ids: what a
    test compares before and after a rebuild."""
    workflows = (
        Workflow.objects.all()
        if tenant_id is None
        else Workflow.objects.filter(tenant_id=tenant_id)
    )
    out: dict[str, set[Any]] = {}
    for wf in workflows:
        for name, rows in live_rows(wf).items():
            if name == "workflow":
                rows = {(k, repr(v)) for k, v in rows.items()}
            out.setdefault(name, set()).update((wf.pk, r) for r in rows)
    return out


# -- the workflow columns a rebuild reads, against the events -----------------------------
#
# A rebuild trusts a few of the workflow row's own columns: ``created_at`` names the
# partition its events are read from, ``template_id`` the definition they are replayed
# under, ``subject_id`` the summary line. None of them is hashed, so the chain check
# cannot vouch for them: each is compared with what the workflow's first event says
# (its time, its template key and version, and, from hash format 3, the subject it
# recorded). A rebuild over a column that disagrees would make the read models agree
# with the edit (a created_at moved back a month reads no events: a finished workflow
# would become NEW), so the rebuild refuses and names the workflow and the column.

COLUMN_DISAGREES = "workflow {workflow}: column {column} says {have}; its first event says {want}"
NO_FIRST_EVENT = "workflow {workflow}: column version says {version}; it has no first event"
_COLUMNS_BATCH = 500
_READ = (
    "pk",
    "version",
    "created_at",
    "template_key",
    "template_version",
    "template__key",
    "template__version",
    "subject_type",
    "subject_id",
)


def read_column_problems(*, tenant_id: int | None = None) -> list[str]:
    """Every column a rebuild reads that is not what the workflow's first event says."""
    qs = Workflow.objects.order_by("created_at", "id")
    if tenant_id is not None:
        qs = qs.filter(tenant_id=tenant_id)
    problems: list[str] = []
    batch: list[tuple[Any, ...]] = []
    for row in qs.values_list(*_READ).iterator(_COLUMNS_BATCH):
        batch.append(row)
        if len(batch) == _COLUMNS_BATCH:
            problems.extend(_batch_column_problems(batch))
            batch = []
    problems.extend(_batch_column_problems(batch))
    return problems


def _batch_column_problems(batch: list[tuple[Any, ...]]) -> Iterator[str]:
    if not batch:
        return
    firsts = {
        str(e[0]): e[1:]
        for e in WorkflowEvent.objects.filter(seq=1, workflow_id__in=[r[0] for r in batch])
        .order_by()
        .values_list("workflow_id", "created_at", "payload", "recorded")
    }
    for row in batch:
        wf = dict(zip(_READ, row, strict=True))
        first = firsts.get(str(wf["pk"]))
        if first is None:
            if wf["version"]:
                yield NO_FIRST_EVENT.format(workflow=wf["pk"], version=wf["version"])
            continue
        for column, have, want in _column_pairs(wf, *first):
            if have != want:
                yield COLUMN_DISAGREES.format(
                    workflow=wf["pk"], column=column, have=_said(have), want=_said(want)
                )


def _column_pairs(
    wf: dict[str, Any], at: dt.datetime, payload: Any, recorded: Any
) -> Iterator[tuple[str, Any, Any]]:
    """(column, what the row says, what the first event says) for each column read."""
    yield "created_at", wf["created_at"], at
    payload = payload if isinstance(payload, dict) else {}
    if "workflow_type" in payload:
        key, version = payload["workflow_type"], payload.get("definition_version")
        yield "template_key", wf["template_key"], key
        yield "template_version", wf["template_version"], version
        yield "template", (wf["template__key"], wf["template__version"]), (key, version)
    if isinstance(recorded, dict):
        yield "subject_type", wf["subject_type"], recorded.get("subject_type")
        yield "subject_id", wf["subject_id"], recorded.get("subject_id")


def _said(value: Any) -> str:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, tuple):
        return " version ".join(str(v) for v in value)
    return repr(value)
