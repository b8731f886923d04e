"""Workflow state, and ``evolve``: how each event changes it.

State is a plain immutable value. ``evolve`` never consults a definition, a clock or
a directory: everything it needs is in the event, so a history replays alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from . import events as ev
from .events import Assignment, Timer
from .status import (
    APPROVED,
    CANCELLED,
    COMPENSATING,
    COMPENSATION_FAILED,
    COMPLETED,
    NEW,
    PENDING_PREFIX,
    REJECTED,
    ROLLED_BACK,
    RUNNING,
    STATUSES,  # noqa: F401  (re-exported: the statuses are the state's)
    TERMINAL,
    WITHDRAWN,
    move_check,
    moving_events,
)

SUBMITTER_STEP = "submitter"
"""The step id a workflow reads while it waits on its submitter for changes."""


@dataclass(frozen=True, slots=True)
class PendingActivity:
    """The one activity attempt the workflow waits for."""

    step: str
    activity: str
    queue: str
    attempt: int
    not_before: float
    timeout: float
    undo: bool
    round: int = 1
    heartbeat_timeout: float | None = None


@dataclass(frozen=True, slots=True)
class HeartbeatLease:
    """What the engine knows of the running attempt's heartbeats: the last one's time
    (None before the first), its details (those carried over from the attempt before
    until it gives its own), the key of the timer that fails the attempt if no
    heartbeat comes in time, and how many heartbeats it gave."""

    at: float | None = None
    details: Any = None
    timer: str | None = None
    beats: int = 0


@dataclass(frozen=True, slots=True)
class State:
    status: str = NEW
    workflow_type: str = ""
    definition_version: int = 0
    data: Mapping[str, Any] = field(default_factory=dict)
    submitter: str | None = None
    step: str | None = None
    entries: int = 0
    assignments: tuple[Assignment, ...] = ()
    approvals: tuple[tuple[str, int], ...] = ()  # (actor, slot) of each approval so far
    mode: str = ""
    required: int = 0
    due_at: float | None = None
    timers: tuple[Timer, ...] = ()
    activity: PendingActivity | None = None
    awaiting_signal: str | None = None
    # completed rounds (step, round) of steps with an undo, oldest first, each once
    compensations: tuple[tuple[str, int], ...] = ()
    outcome: str | None = None  # status to end in once compensation is done
    resubmit_step: str | None = None
    error: str | None = None
    # (step, user) of every approval in the workflow's life, in person or through a
    # delegate; never cleared, for the distinct_approvers (four eyes) rule.
    step_approvals: tuple[tuple[str, str], ...] = ()
    # (action step, its latest round): how many times each action step was entered
    rounds: tuple[tuple[str, int], ...] = ()
    heartbeat: HeartbeatLease | None = None  # of the running attempt, if any
    # For the operations an admin may take (templates_engine.admin_operations): the step that
    # last failed for good, the steps whose work was undone since, and the number of
    # the last failed attempt (a retried undo goes on counting from it).
    failed_step: str | None = None
    undone: tuple[str, ...] = ()
    failed_attempt: int = 0
    # A finished workflow stays finished; these record what was done about it since:
    # the new workflow a rolled-back one was started again as, and whether a failed
    # undo was settled (by hand, or by retried undos that succeeded).
    restarted_as: str | None = None
    settled: bool = False
    # Whether the submitter cancelled it themselves: its public status reads WITHDRAWN.
    withdrawn: bool = False
    # Signals that arrived before a step waited for them, (name, payload) in arrival
    # order, not yet taken: the next step that waits for a name takes its oldest.
    early_signals: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    # The base currency and rates the start recorded (templates_engine.money), if any.
    conversion: Mapping[str, Any] | None = None

    def early_signal(self, name: str) -> Mapping[str, Any] | None:
        """The payload of the oldest early signal ``name`` not yet taken, if any."""
        for kept, payload in self.early_signals:
            if kept == name:
                return payload
        return None

    def round_of(self, step: str) -> int:
        """The latest round of action step ``step``; 0 if it never ran."""
        for name, number in self.rounds:
            if name == step:
                return number
        return 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def next_wake_at(self) -> float | None:
        """The earliest moment something is due: a timer or an activity attempt."""
        times = [t.fire_at for t in self.timers]
        if self.activity is not None:
            times.append(self.activity.not_before)
        return min(times) if times else None

    def outstanding(self) -> tuple[Assignment, ...]:
        """Assignments still expected to act on the current approval step."""
        if not self.assignments:
            return ()
        approved = {actor for actor, _ in self.approvals}
        filled = {slot for _, slot in self.approvals} if self.mode == "all" else set()
        return tuple(a for a in self.assignments if a.user not in approved and a.slot not in filled)


_STATE_FIELDS = tuple(f.name for f in fields(State))
_STATE_FIELD_SET = frozenset(_STATE_FIELDS)
_STATE_VALUES = attrgetter(*_STATE_FIELDS)  # every field's value, in order, in one call
_STATE_INDEX = {name: i for i, name in enumerate(_STATE_FIELDS)}


def replace(s: State, /, **changes: Any) -> State:
    """``dataclasses.replace`` for State, without its per-call field inspection:
    replay calls it once per event, and that inspection was most of replay's time."""
    if not _STATE_FIELD_SET.issuperset(changes):
        unknown = ", ".join(sorted(set(changes) - _STATE_FIELD_SET))
        raise TypeError(f"State has no field(s) {unknown}")
    values = list(_STATE_VALUES(s))
    for name, value in changes.items():
        values[_STATE_INDEX[name]] = value
    return State(*values)


def _started(s: State, e: ev.WorkflowStarted) -> State:
    return replace(
        s,
        status=RUNNING,
        workflow_type=e.workflow_type,
        definition_version=e.definition_version,
        data=dict(e.data),
        submitter=e.submitter,
        conversion=e.conversion,
    )


def _leave_step(s: State, **changes: Any) -> State:
    return replace(
        s,
        assignments=(),
        approvals=(),
        mode="",
        required=0,
        due_at=None,
        timers=(),
        awaiting_signal=None,
        heartbeat=None,
        **changes,
    )


def _approval_requested(s: State, e: ev.ApprovalRequested) -> State:
    return replace(
        s,
        step=e.step,
        entries=s.entries + 1,
        assignments=e.assignments,
        approvals=(),
        mode=e.mode,
        required=e.required,
        due_at=e.due_at,
        timers=e.timers,
    )


def _decision(s: State, e: ev.DecisionRecorded) -> State:
    if e.decision != "approve":
        return s
    assignments = s.assignments
    if e.on_behalf_of is not None and e.on_behalf_of != e.actor:
        # A delegate decided for a principal who held the task in person: the
        # principal's tasks are spent, as if delegated when the step began, so
        # neither of them can approve for the principal again.
        assignments = tuple(
            Assignment(e.actor, a.slot, a.user) if a.user == e.on_behalf_of else a
            for a in assignments
        )
    approvers = [e.actor] if e.on_behalf_of in (None, e.actor) else [e.actor, e.on_behalf_of]
    recorded = tuple((e.step, u) for u in approvers if (e.step, u) not in s.step_approvals)
    return replace(
        s,
        assignments=assignments,
        approvals=(*s.approvals, (e.actor, e.slot)),
        step_approvals=s.step_approvals + recorded,
    )


def _reassigned(s: State, e: ev.TaskReassigned) -> State:
    out: list[Assignment] = []
    for a in s.assignments:
        if a.user == e.from_user:
            principal = a.on_behalf_of or a.user
            # Handed back to the person the rule named: they act for themselves again.
            behalf = principal if e.reason == "delegated" and principal != e.to_user else None
            moved = Assignment(e.to_user, a.slot, behalf)
            if e.reason == ev.HANDED_ON and any(
                x.user == e.to_user and x.slot == a.slot for x in s.assignments
            ):
                # a group's other member already holds this slot: nothing to add
                if not e.replace:
                    out.append(a)
                continue
            if e.replace:
                out.append(moved)
            else:
                out.extend((a, moved))
        else:
            out.append(a)
    return replace(s, assignments=tuple(out))


def _drop_timer(s: State, key: str) -> tuple[Timer, ...]:
    return tuple(t for t in s.timers if t.key != key)


def _timer_fired(s: State, e: ev.TimerFired) -> State:
    return replace(s, timers=_drop_timer(s, e.key))


def _reminder(s: State, e: ev.ReminderSent) -> State:
    return replace(s, timers=_drop_timer(s, e.timer))


def _escalated(s: State, e: ev.Escalated) -> State:
    if e.replace and e.assignments:
        approved = {actor for actor, _ in s.approvals}
        kept = tuple(a for a in s.assignments if a.user in approved)
        assignments = kept + e.assignments
    else:
        assignments = s.assignments + e.assignments
    return replace(s, timers=_drop_timer(s, e.timer), assignments=assignments, due_at=None)


def _approver_added(s: State, e: ev.ApproverAdded) -> State:
    return replace(s, assignments=s.assignments + e.assignments)


def _step_completed(s: State, e: ev.StepCompleted) -> State:
    compensations = s.compensations
    done = (e.step, s.round_of(e.step) or 1)
    if e.compensate and done not in compensations:
        compensations = (*compensations, done)
    return _leave_step(s, activity=None, compensations=compensations)


def _sent_back(s: State, e: ev.SentBack) -> State:
    if e.to_step is not None:
        return _leave_step(s)
    submitter = s.submitter or ""
    return replace(
        _leave_step(s),
        step=SUBMITTER_STEP,
        entries=s.entries + 1,
        assignments=(Assignment(submitter, 0),),
        mode="any",
        required=1,
        timers=e.timers,
        resubmit_step=e.step,
    )


def _resubmitted(s: State, e: ev.Resubmitted) -> State:
    return replace(_leave_step(s), data=dict(e.data))


def _activity_scheduled(s: State, e: ev.ActivityScheduled) -> State:
    pending = PendingActivity(
        e.step,
        e.activity,
        e.queue,
        e.attempt,
        e.not_before,
        e.timeout,
        e.undo,
        e.round,
        e.heartbeat_timeout,
    )
    step = s.step if e.undo else e.step
    rounds = s.rounds
    if not e.undo and s.round_of(e.step) != e.round:
        rounds = (*(r for r in s.rounds if r[0] != e.step), (e.step, e.round))
    heartbeat = None
    if e.heartbeat_timeout is not None or e.heartbeat_details is not None:
        heartbeat = HeartbeatLease(details=e.heartbeat_details)
    return replace(s, activity=pending, step=step, rounds=rounds, heartbeat=heartbeat)


def _heartbeat(s: State, e: ev.ActivityHeartbeat) -> State:
    last = s.heartbeat or HeartbeatLease()
    details = last.details if e.details is None else e.details
    lease = HeartbeatLease(e.at, details, e.timer.key if e.timer else None, last.beats + 1)
    timers = _drop_timer(s, last.timer) if last.timer else s.timers
    if e.timer is not None:
        timers = (*timers, e.timer)
    return replace(s, heartbeat=lease, timers=timers)


def _attempt_over(s: State, **changes: Any) -> State:
    """The attempt ended: its heartbeat lease and timer go with it."""
    last = s.heartbeat
    timers = _drop_timer(s, last.timer) if last is not None and last.timer else s.timers
    return replace(s, activity=None, heartbeat=None, timers=timers, **changes)


def _activity_succeeded(s: State, e: ev.ActivitySucceeded) -> State:
    if e.undo:
        undone = s.undone if e.step in s.undone else (*s.undone, e.step)
        return _attempt_over(s, compensations=s.compensations[:-1], undone=undone)
    if e.result is None:
        return _attempt_over(s)
    results = dict(s.data.get("results") or {})
    results[e.step] = e.result
    return _attempt_over(s, data={**s.data, "results": results})


def _activity_failed(s: State, e: ev.ActivityFailed) -> State:
    error = f"{e.error}: {e.message}" if e.message else e.error
    return _attempt_over(s, error=error, failed_attempt=e.attempt)


def _wait_started(s: State, e: ev.WaitStarted) -> State:
    return replace(s, step=e.step, entries=s.entries + 1, timers=e.timers)


def _signal_awaited(s: State, e: ev.SignalAwaited) -> State:
    return replace(s, step=e.step, entries=s.entries + 1, awaiting_signal=e.name, timers=e.timers)


def _signal_received(s: State, e: ev.SignalReceived) -> State:
    if e.step is None:
        return s
    signals = dict(s.data.get("signals") or {})
    signals[e.name] = dict(e.payload)
    early = s.early_signals
    if e.early:  # the step took the oldest kept signal of the name
        names = [name for name, _ in early]
        if e.name in names:
            taken = names.index(e.name)
            early = early[:taken] + early[taken + 1 :]
    data = {**s.data, "signals": signals}
    return replace(s, data=data, awaiting_signal=None, early_signals=early)


def _signal_arrived_early(s: State, e: ev.SignalArrivedEarly) -> State:
    return replace(s, early_signals=(*s.early_signals, (e.name, dict(e.payload))))


def _step_failed(s: State, e: ev.StepFailed) -> State:
    error = f"{e.error}: {e.message}" if e.message else e.error
    return _leave_step(s, activity=None, error=error, failed_step=e.step, undone=())


def _step_retried(s: State, e: ev.StepRetried) -> State:
    return _leave_step(
        s, status=RUNNING, step=None, outcome=None, error=None, failed_step=None, undone=()
    )


def _compensation_retried(s: State, e: ev.CompensationRetried) -> State:
    return _leave_step(s, status=COMPENSATING)


def _compensation_resolved(s: State, e: ev.CompensationResolved) -> State:
    # The undo done by hand leaves the stack like a successful undo would.
    return _leave_step(s, status=e.outcome, step=None, activity=None, compensations=())


def _workflow_restarted(s: State, e: ev.WorkflowRestarted) -> State:
    return replace(s, restarted_as=e.restarted_as)


def _compensation_settled(s: State, e: ev.CompensationSettled) -> State:
    return replace(s, settled=True, activity=None, compensations=())


def _compensating(s: State, e: ev.CompensationStarted) -> State:
    left = _leave_step(s, status=COMPENSATING, outcome=e.outcome, activity=None)
    by = ev.cancelled_by(e.reason) if e.outcome == CANCELLED else None
    if by is not None and by[0] is not None and by[0] == s.submitter:
        return replace(left, withdrawn=True)
    return left


def _cancelled(s: State, e: ev.WorkflowCancelled) -> State:
    """Cancelled: by its submitter, a withdrawal (here, or when the undo it started
    began)."""
    withdrawn = s.withdrawn or (e.actor is not None and e.actor == s.submitter)
    left = _leave_step(s, status=CANCELLED, step=None, activity=None)
    return replace(left, withdrawn=withdrawn)


def _finish(status: str) -> Callable[[State, Any], State]:
    def apply(s: State, e: Any) -> State:
        return _leave_step(s, status=status, step=None, activity=None)

    return apply


def _skip(s: State, e: Any) -> State:
    return s


_EVOLVERS: dict[type[ev.Event], Callable[[State, Any], State]] = {
    ev.WorkflowStarted: _started,
    ev.StepSkipped: _skip,
    ev.ApproversExcluded: _skip,
    ev.ApprovalRequested: _approval_requested,
    ev.DecisionRecorded: _decision,
    ev.TaskReassigned: _reassigned,
    ev.TimerFired: _timer_fired,
    ev.ReminderSent: _reminder,
    ev.Escalated: _escalated,
    ev.StepCompleted: _step_completed,
    ev.SentBack: _sent_back,
    ev.Resubmitted: _resubmitted,
    ev.ActivityScheduled: _activity_scheduled,
    ev.ActivitySucceeded: _activity_succeeded,
    ev.ActivityFailed: _activity_failed,
    ev.ActivityHeartbeat: _heartbeat,
    ev.WaitStarted: _wait_started,
    ev.SignalAwaited: _signal_awaited,
    ev.SignalReceived: _signal_received,
    ev.SignalArrivedEarly: _signal_arrived_early,
    ev.StepFailed: _step_failed,
    ev.CompensationStarted: _compensating,
    ev.WorkflowCompleted: _finish(COMPLETED),
    ev.WorkflowRejected: _finish(REJECTED),
    ev.WorkflowRolledBack: _finish(ROLLED_BACK),
    ev.CompensationFailed: _finish(COMPENSATION_FAILED),
    ev.WorkflowCancelled: _cancelled,
    ev.StepRetried: _step_retried,
    ev.CompensationRetried: _compensation_retried,
    ev.CompensationResolved: _compensation_resolved,
    ev.TimerRearmed: _skip,
    ev.WorkflowRestarted: _workflow_restarted,
    ev.UndoRetried: _skip,
    ev.CompensationSettled: _compensation_settled,
    ev.ApproverAdded: _approver_added,
    ev.CommentAdded: _skip,  # a conversation changes no step
    ev.FileAttached: _skip,
}


_MOVING = moving_events()


def evolve(state: State, event: ev.Event) -> State:
    """Return the state after ``event``. A status change the status machine does not
    allow (templates_engine.status) raises StatusMoveRefused."""
    after = _EVOLVERS[type(event)](state, event)
    if after.status != state.status or type(event) in _MOVING:
        move_check(event, state.status, after.status)
    return after


def public_status(state: State) -> str:
    """The status as the API shows it: ``PENDING_<STEP>`` while an approval (or the
    submitter) is awaited, ``APPROVED`` once completed, ``WITHDRAWN`` once its
    submitter cancelled it, otherwise the engine status."""
    if state.status == RUNNING and state.assignments and state.step:
        return f"{PENDING_PREFIX}{state.step.upper()}"
    if state.status == COMPLETED:
        return APPROVED
    if state.status == CANCELLED and state.withdrawn:
        return WITHDRAWN
    return state.status
