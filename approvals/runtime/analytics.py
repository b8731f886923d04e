"""The analytics read model's projection: each command's events open and close step
visits (``models.StepVisit``). The live path and ``rebuild_read_models`` apply the same
rule (``visit_changes``) command by command, so the rebuilt rows equal the live ones.

A visit opens when the workflow enters an approval, wait or signal step, or goes back
to its submitter for changes (the events that count ``State.entries``, so a visit's
number is that count), and closes when it leaves: completed (approved, the wait over,
the signal come, the changes resubmitted), sent back, rejected, cancelled, or ended
otherwise (a failure, an admin's operation). Its writes go with the command's other
writes (``store.gathered_writes``): an INSERT of the visits it opens, an UPDATE by
primary key of the one it closes or escalates, so a command sends no statement more.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from templates_engine import RUNNING, State
from templates_engine import events as ev
from templates_engine.state import SUBMITTER_STEP

from ..definitions import definition_for
from ..models import StepVisit, Workflow
from . import store

APPROVAL, CHANGES, WAIT, SIGNAL = "approval", "changes", "wait", "signal"
COMPLETED, REJECTED, SENT_BACK, CANCELLED, ENDED = (
    "completed",
    "rejected",
    "sent_back",
    "cancelled",
    "ended",
)
# Events after which the workflow is in no step a person or a timer waits on.
_ENDING = (
    ev.StepFailed,
    ev.CompensationStarted,
    ev.WorkflowCompleted,
    ev.WorkflowRejected,
    ev.WorkflowRolledBack,
    ev.CompensationFailed,
    ev.StepRetried,
)
_NAMESPACE = uuid.UUID("6f1d8a52-3c1e-4b7a-9d55-0a2f6c3e9b11")


def visit_id(workflow_id: Any, entry: int) -> uuid.UUID:
    """The primary key of the workflow's ``entry``-th visit: computed, never read."""
    return uuid.uuid5(_NAMESPACE, f"{workflow_id}:{entry}")


@dataclass(frozen=True, slots=True)
class Visit:
    entry: int
    step: str
    kind: str
    entered_at: dt.datetime
    due_at: dt.datetime | None = None
    left_at: dt.datetime | None = None
    outcome: str = ""
    escalated: bool = False
    dims: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class OpenVisit:
    entry: int
    step: str
    kind: str


def open_visit(state: State) -> OpenVisit | None:
    """The visit ``state`` is in, if any: the step it last entered, while it has not
    left it (leaving clears the mode, the awaited signal and the step's timers)."""
    if state.status != RUNNING or not state.entries or not state.step:
        return None
    if state.mode:
        return OpenVisit(
            state.entries, state.step, CHANGES if state.step == SUBMITTER_STEP else APPROVAL
        )
    if state.awaiting_signal is not None:
        return OpenVisit(state.entries, state.step, SIGNAL)
    if any(t.kind == "wait" and t.step == state.step for t in state.timers):
        return OpenVisit(state.entries, state.step, WAIT)
    return None


@dataclass
class Changes:
    """What one command does to the visits: those it opens (complete if it also
    closes them), and the one open before it that it closes or marks escalated."""

    opened: list[Visit]
    earlier: Visit | None  # the visit open before the command, as the command leaves it


def _opening(e: ev.Event) -> tuple[str, str, float | None] | None:
    if isinstance(e, ev.ApprovalRequested):
        return e.step, APPROVAL, e.due_at
    if isinstance(e, ev.WaitStarted):
        return e.step, WAIT, None
    if isinstance(e, ev.SignalAwaited):
        return e.step, SIGNAL, None
    if isinstance(e, ev.SentBack) and e.to_step is None:
        return SUBMITTER_STEP, CHANGES, None
    return None


def _closing(e: ev.Event, current: Visit, rejected: bool) -> str | None:
    if isinstance(e, ev.SentBack):
        return REJECTED if rejected else SENT_BACK
    if isinstance(e, ev.StepCompleted) and e.step == current.step:
        return COMPLETED
    if isinstance(e, ev.Resubmitted):
        return COMPLETED
    if isinstance(e, ev.WorkflowCancelled):
        return CANCELLED
    if isinstance(e, _ENDING):
        return REJECTED if rejected else ENDED
    return None


def visit_changes(
    before: OpenVisit | None,
    entries: int,
    events: Sequence[ev.Event],
    now: dt.datetime,
    dims: Mapping[str, str],
) -> Changes:
    """The visits the command's ``events`` open and close, given the visit open
    before it (``before``) and the entries counted before it."""
    earlier = Visit(before.entry, before.step, before.kind, now) if before is not None else None
    current = earlier
    opened: list[Visit] = []
    rejected = False

    def close(outcome: str) -> None:
        nonlocal current, earlier
        assert current is not None
        done = replace(current, left_at=now, outcome=outcome)
        if current is earlier:
            earlier = done
        else:
            opened[-1] = done
        current = None

    for e in events:
        if current is not None:
            if isinstance(e, ev.DecisionRecorded) and e.decision == "reject":
                rejected = True
            elif isinstance(e, ev.Escalated):
                marked = replace(current, escalated=True)
                if current is earlier:
                    earlier = marked
                else:
                    opened[-1] = marked
                current = marked
            outcome = _closing(e, current, rejected)
            if outcome is not None:
                close(outcome)
        started = _opening(e)
        if started is not None:
            if current is not None:
                close(ENDED)
            step, kind, due = started
            entries += 1
            current = Visit(
                entries,
                step,
                kind,
                now,
                due_at=dt.datetime.fromtimestamp(due, dt.UTC) if due is not None else None,
                dims=dict(dims),
            )
            opened.append(current)
            rejected = False
    if earlier is not None and earlier.left_at is None and not earlier.escalated:
        earlier = None  # untouched: nothing to write
    return Changes(opened, earlier)


@lru_cache(maxsize=1024)
def enum_fields(template_id: int) -> tuple[str, ...]:
    """The names of the workflow template version's enum fields (the page's filters)."""
    schema = definition_for(template_id).schema or {}
    props = schema.get("properties") or {}
    return tuple(
        sorted(n for n, spec in props.items() if isinstance(spec, Mapping) and "enum" in spec)
    )


def dims_of(template_id: int, data: Mapping[str, Any]) -> dict[str, str]:
    return {n: data[n] for n in enum_fields(template_id) if isinstance(data.get(n), str)}


def command_visits(
    wf: Workflow, old: State, new: State, events: Sequence[ev.Event], now: dt.datetime
) -> Changes:
    return visit_changes(
        open_visit(old), old.entries, events, now, dims_of(wf.template_id, new.data)
    )


VISIT_FIELDS = (
    "entry",
    "template_key",
    "step",
    "kind",
    "entered_at",
    "left_at",
    "due_at",
    "outcome",
    "escalated",
    "dims",
)
_COLUMNS = ("id", "tenant", "workflow", *VISIT_FIELDS)


def visit_values(wf: Workflow, v: Visit) -> tuple[Any, ...]:
    """The visit's values in the order of ``VISIT_FIELDS``."""
    return (
        v.entry,
        wf.template_key,
        v.step,
        v.kind,
        v.entered_at,
        v.left_at,
        v.due_at,
        v.outcome,
        v.escalated,
        dict(v.dims or {}),
    )


def project_visits(
    wf: Workflow, old: State, new: State, now: dt.datetime, events: Sequence[ev.Event]
) -> None:
    """Write the command's visit changes with its other writes."""
    if not events:
        return
    changes = command_visits(wf, old, new, events, now)
    if changes.opened:
        store.insert(
            StepVisit,
            _COLUMNS,
            [
                (visit_id(wf.pk, v.entry), wf.tenant_id, wf.pk, *visit_values(wf, v))
                for v in changes.opened
            ],
        )
    e = changes.earlier
    if e is not None:
        pk = visit_id(wf.pk, e.entry)
        if e.left_at is not None:
            values: dict[str, Any] = {"left_at": e.left_at, "outcome": e.outcome}
            if e.escalated:
                values["escalated"] = True
            store.update(StepVisit, pk, values)
        else:
            store.update(StepVisit, pk, {"escalated": True})


# -- the rebuild --------------------------------------------------------------------------


def visits_apply(
    visits: dict[int, Visit],
    template_id: int,
    old: State,
    new: State,
    events: Sequence[ev.Event],
    now: dt.datetime,
) -> None:
    """The rule of ``project_visits``, on a dict of entry -> visit."""
    changes = visit_changes(
        open_visit(old), old.entries, events, now, dims_of(template_id, new.data)
    )
    for v in changes.opened:
        visits[v.entry] = v
    e = changes.earlier
    if e is not None and e.entry in visits:
        kept = visits[e.entry]
        visits[e.entry] = replace(
            kept,
            left_at=e.left_at or kept.left_at,
            outcome=e.outcome or kept.outcome,
            escalated=kept.escalated or e.escalated,
        )
