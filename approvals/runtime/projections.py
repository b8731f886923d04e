"""Projections of a command's events, written in the command's transaction: the
inbox (pending tasks), the participants, the timers and the activity outbox. Each compares the state
before and after the command, so it touches only what changed. An attempt due at once
is handed to the workers after commit through ``dispatch``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings

from templates_engine import RUNNING, State
from templates_engine import events as ev
from templates_engine.keys import activity_key
from templates_engine.state import PendingActivity

from .. import clock
from ..definitions import definition_for
from ..models import ActivityAttempt, PendingTask, Timer, Workflow, WorkflowParticipant
from ..notifications.messages import mail_project_command
from ..words.data import money_fields
from . import dispatch, store
from .analytics import project_visits
from .directory import TenantDirectory
from .rearm_projection import project_operations


def project(
    wf: Workflow,
    old: State,
    new: State,
    now: dt.datetime,
    directory: TenantDirectory,
    events: Sequence[ev.Event] = (),
) -> None:
    """Every read model from the events alone (and the states before and after them),
    so the live path and a rebuild from history apply the same rules."""
    _project_participants(wf, events, directory)
    _project_tasks(wf, old, new, now, directory, events)
    _project_timers(wf, old, new, now, events)
    _project_activity(wf, old, new, now, events)
    project_operations(wf, events, now)
    project_visits(wf, old, new, now, events)
    mail_project_command(wf, old, new, events, now, directory)


def _attempt_rows(wf: Workflow, a: PendingActivity) -> Any:
    """The open outbox row of the attempt ``a``."""
    return ActivityAttempt.objects.filter(
        workflow_id=wf.pk,
        step=a.step,
        undo=a.undo,
        round=a.round,
        attempt=a.attempt,
        finished_at__isnull=True,
    )


def _outcome(a: PendingActivity, events: Sequence[ev.Event]) -> str:
    """How the attempt ``a`` ended, read from the events that ended it: ``ok``, the
    error's name (``Timeout``, ``HeartbeatTimeout`` when a heartbeat timer fired, the
    exception's class), or ``abandoned`` (cancelled, or the workflow moved on)."""
    for e in events:
        if isinstance(e, ev.ActivitySucceeded | ev.ActivityFailed) and (
            e.step,
            e.attempt,
            e.undo,
        ) == (a.step, a.attempt, a.undo):
            return "ok" if isinstance(e, ev.ActivitySucceeded) else e.error
    return "abandoned"


def people_named(events: Iterable[ev.Event]) -> set[str]:
    """The people the events make participants of their workflow: the submitter, every
    assignee (with the approver a delegate holds a task for), and every decider."""
    named: set[str | None] = set()
    for e in events:
        if isinstance(e, ev.WorkflowStarted):
            named.add(e.submitter)
        elif isinstance(e, ev.ApprovalRequested | ev.Escalated | ev.ApproverAdded):
            for a in e.assignments:
                named.update((a.user, a.on_behalf_of))
            if isinstance(e, ev.ApproverAdded):
                named.add(e.user)
        elif isinstance(e, ev.TaskReassigned):
            named.add(e.to_user)
        elif isinstance(e, ev.DecisionRecorded):
            named.update((e.actor, e.on_behalf_of))
    named.discard(None)
    return named  # type: ignore[return-value]


def _project_participants(
    wf: Workflow, events: Sequence[ev.Event], directory: TenantDirectory
) -> None:
    names = people_named(events)
    if not names:
        return
    ids = directory.user_ids(names)
    store.insert(
        WorkflowParticipant,
        ("tenant", "workflow", "user"),
        ((wf.tenant_id, wf.pk, pk) for pk in sorted(ids.values())),
        on_conflict_ignore=True,
    )


def _open_tasks(state: State) -> dict[str, str]:
    """assignee -> on behalf of, for the tasks the state leaves open."""
    if state.status != RUNNING or not state.step:
        return {}
    return {a.user: a.on_behalf_of or "" for a in state.outstanding()}


def _project_tasks(
    wf: Workflow,
    old: State,
    new: State,
    now: dt.datetime,
    directory: TenantDirectory,
    events: Sequence[ev.Event] = (),
) -> None:
    before, after = _open_tasks(old), _open_tasks(new)
    same_step = old.step == new.step and old.entries == new.entries
    if before == after and same_step:
        return
    handed = handed_on_marks(new, events)
    wf_id = store.uuid_param(Workflow, wf.pk)
    if same_step:
        # Only who holds the step changed: touch just those rows, so the others keep
        # their id and place in an inbox someone is paging through.
        gone = [user for user, behalf in before.items() if after.get(user) != behalf]
        added = {user: behalf for user, behalf in after.items() if before.get(user) != behalf}
    else:
        gone, added = list(before), after
    # Counted: each task write is a clause of the command's one gathered statement, which
    # adds up the assignees' open tasks from the rows the clauses return (store.task_write);
    # else each is sent now and the task triggers count them.
    counted = store.inbox_counted()
    if not same_step:
        if before:  # a start, or a step entered from none, left no rows to remove
            _task_write(
                f"DELETE FROM {store.table(PendingTask)} WHERE workflow_id = %s",
                [wf_id],
                -1,
                counted,
            )
    elif gone_ids := sorted(directory.user_ids_any(gone).values()):
        marks = ", ".join(["%s"] * len(gone_ids))
        _task_write(
            f"DELETE FROM {store.table(PendingTask)}"
            f" WHERE workflow_id = %s AND assignee_id IN ({marks})",
            [wf_id, *gone_ids],
            -1,
            counted,
        )
    kept = {user: leaver for user, leaver in handed.items() if user not in added}
    if same_step and kept:
        # A group's other members keep the rows they had (already written): marked now.
        kept_ids = directory.user_ids_any(kept)
        for user, leaver in sorted(kept.items()):
            if user in kept_ids:
                _task_write(
                    f"UPDATE {store.table(PendingTask)} SET handed_on_from = %s"
                    " WHERE workflow_id = %s AND assignee_id = %s",
                    [leaver, wf_id, kept_ids[user]],
                    0,
                    counted,
                )
    if not added:
        return
    ids = directory.user_ids(added)
    default_due = now + dt.timedelta(seconds=settings.APPROVALS_DEFAULT_TASK_DUE_SECONDS)
    due = clock.from_epoch(new.due_at) if new.due_at is not None else default_due
    # The mails that follow look up the same people (the holders and the submitter):
    # asked together here, the directory answers both from one lookup.
    facts = task_facts(wf, wf.summary, new.data, new.submitter, directory, added)
    store.insert(
        PendingTask,
        (
            "tenant",
            "assignee",
            "workflow",
            "step",
            "on_behalf_of",
            "due_at",
            "created_at",
            "handed_on_from",
            *TASK_FACTS,
        ),
        (
            (wf.tenant_id, ids[user], wf.pk, new.step or "", behalf, due, now)
            + (handed.get(user, ""), *facts)
            for user, behalf in sorted(added.items())
            if user in ids
        ),
        inbox_change=1 if counted else None,
    )


def _task_write(sql: str, params: list[Any], change: int, counted: bool) -> None:
    """A DELETE or UPDATE of tasks: a clause of the gathered statement that counts it
    (``counted``), else sent now for the task triggers to count."""
    if counted:
        store.task_write(PendingTask, sql, params, change)
    else:
        store.execute(sql, params)


# The columns of ``task_facts``, in its order.
TASK_FACTS = ("template_key", "amount_minor", "requester_key", "search_text")


def task_facts(
    wf: Workflow,
    summary: str,
    data: Mapping[str, Any],
    submitter: str | None,
    directory: TenantDirectory,
    also: Iterable[str] = (),
) -> tuple[str, int | None, str, str]:
    """What the inbox sorts and filters a task of ``wf`` on (``TASK_FACTS``): its kind,
    its amount in minor units (the first money field the data holds, as the amount
    shown), the requester's sort name and the lower-case text its search matches.
    ``also``: more people to look up with the submitter (the directory keeps them)."""
    schema = definition_for(wf.template_id).schema
    amount = None
    for name in money_fields(schema):
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            amount = value if -(2**63) <= value < 2**63 else None
            break
    person = directory.contacts({submitter, *also}).get(submitter) if submitter else None
    first, last = (person.first_name, person.last_name) if person else ("", "")
    requester = (first or submitter or "").lower()[:150]
    words = (summary, wf.subject_id, first, last, submitter or "")
    return wf.template_key, amount, requester, "\n".join(w for w in words if w).lower()


def handed_on_marks(new: State, events: Iterable[ev.Event]) -> dict[str, str]:
    """receiver -> the leaver, for each task the events hand on from someone who left
    (TaskReassigned of reason handed_on) that the receiver still holds after them."""
    holders = _open_tasks(new)
    return {
        e.to_user: e.from_user
        for e in events
        if isinstance(e, ev.TaskReassigned)
        and e.reason == ev.HANDED_ON
        and e.step == new.step
        and e.to_user in holders
    }


def _project_timers(
    wf: Workflow, old: State, new: State, now: dt.datetime, events: Sequence[ev.Event]
) -> None:
    """The timer rows: fired ones marked (the events say which), the ones the workflow
    no longer holds deleted, new ones inserted."""
    if old.timers == new.timers:
        return
    wf_id = store.uuid_param(Workflow, wf.pk)
    fired = sorted({e.key for e in events if isinstance(e, ev.TimerFired)})
    if fired:
        store.execute(
            f"UPDATE {store.table(Timer)} SET fired_at = %s WHERE workflow_id = %s"
            f" AND fired_at IS NULL AND key IN ({', '.join(['%s'] * len(fired))})",
            [store.param(Timer, "fired_at", now), wf_id, *fired],
        )
    old_keys = {t.key for t in old.timers}
    cancelled = old_keys - {t.key for t in new.timers} - set(fired)
    if cancelled:
        keys = sorted(cancelled)
        store.execute(
            f"DELETE FROM {store.table(Timer)} WHERE workflow_id = %s AND fired_at IS NULL"
            f" AND key IN ({', '.join(['%s'] * len(keys))})",
            [wf_id, *keys],
        )
    store.insert(
        Timer,
        ("tenant", "workflow", "key", "step", "kind", "fire_at"),
        (
            (wf.tenant_id, wf.pk, t.key, t.step, t.kind, clock.from_epoch(t.fire_at))
            for t in new.timers
            if t.key not in old_keys
        ),
    )


def _project_activity(
    wf: Workflow,
    old: State,
    new: State,
    now: dt.datetime,
    events: Sequence[ev.Event],
) -> None:
    if old.activity == new.activity:
        if new.activity is not None and any(isinstance(e, ev.ActivityHeartbeat) for e in events):
            _attempt_rows(wf, new.activity).update(
                heartbeat_at=now,
                heartbeat_details=new.heartbeat.details if new.heartbeat else None,
            )
        return
    if old.activity is not None:
        _attempt_rows(wf, old.activity).update(
            finished_at=now, outcome=_outcome(old.activity, events)[:32]
        )
    if new.activity is None:
        return
    a = new.activity
    attempt = ActivityAttempt.objects.create(
        tenant_id=wf.tenant_id,
        workflow_id=wf.pk,
        step=a.step,
        undo=a.undo,
        round=a.round,
        attempt=a.attempt,
        activity=a.activity,
        queue=a.queue,
        idempotency_key=activity_key(str(wf.pk), a.step, a.undo, a.round),
        not_before=clock.from_epoch(a.not_before),
        timeout_seconds=a.timeout,
        heartbeat_timeout_seconds=a.heartbeat_timeout,
        heartbeat_details=new.heartbeat.details if new.heartbeat else None,
    )
    if attempt.not_before <= now:
        dispatch.attempts_dispatch_on_commit(attempt_ids=[attempt.pk])
