"""Events: the only output of the decider, and the whole truth about a workflow.

Each event is a frozen dataclass with a ``type`` name and a ``schema_version``.
``to_dict`` gives the stored JSON shape; ``event_from_dict`` reads it back,
upgrading older shapes through ``UPCASTERS`` so that a history written today
replays after the shapes change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Assignment:
    """One person a task is assigned to, on a slot of an approval step.

    ``on_behalf_of`` is the approver the rule named when ``user`` holds the task
    through a delegation; ``slot`` is the index of the approver rule it satisfies.
    """

    user: str
    slot: int
    on_behalf_of: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"user": self.user, "slot": self.slot, "on_behalf_of": self.on_behalf_of}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Assignment:
        return cls(doc["user"], int(doc["slot"]), doc.get("on_behalf_of"))


@dataclass(frozen=True, slots=True)
class Timer:
    """A durable wake-up: ``key`` is unique within the workflow's life."""

    key: str
    kind: str  # deadline | reminder | wait | signal_timeout
    step: str
    fire_at: float

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "kind": self.kind, "step": self.step, "fire_at": self.fire_at}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Timer:
        return cls(doc["key"], doc["kind"], doc["step"], float(doc["fire_at"]))


class Event:
    """Base of every event type."""

    __slots__ = ()
    type: ClassVar[str]
    schema_version: ClassVar[int] = 1

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"type": self.type, "v": self.schema_version}
        for f in fields(self):  # type: ignore[arg-type]
            doc[f.name] = _dump(getattr(self, f.name))
        return doc


def _dump(value: Any) -> Any:
    if isinstance(value, Assignment | Timer):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_dump(v) for v in value]
    return value


EVENT_TYPES: dict[str, type[Event]] = {}


def _event(cls: type[Event]) -> type[Event]:
    EVENT_TYPES[cls.type] = cls
    return cls


@_event
@dataclass(frozen=True, slots=True)
class WorkflowStarted(Event):
    """``origin`` says what filed the start in the submitter's name, when it was not
    the submitter in person: for a scheduled start ``{"schedule": id, "name": ...,
    "made_by": username}``. It is part of the history, so the hash chain covers it.
    ``conversion`` is the base currency and the dated rates the conditions compare
    amounts at (templates_engine.money), so a replay never asks for today's rates."""

    type: ClassVar[str] = "WorkflowStarted"
    schema_version: ClassVar[int] = 3
    workflow_type: str
    definition_version: int
    data: Mapping[str, Any]
    submitter: str | None
    origin: Mapping[str, Any] | None = None
    conversion: Mapping[str, Any] | None = None


@_event
@dataclass(frozen=True, slots=True)
class StepSkipped(Event):
    type: ClassVar[str] = "StepSkipped"
    step: str


@_event
@dataclass(frozen=True, slots=True)
class ApproversExcluded(Event):
    """People an approval step's rules named who may not hold it, by segregation of
    duties, each as ``(user, reason)``: ``submitter``, or ``already approved <step>``
    under ``distinct_approvers``. Emitted before the ApprovalRequested (or Escalated, or
    StepFailed) it explains; ``fallback`` is True when the step went to its fallback
    approvers because of it."""

    type: ClassVar[str] = "ApproversExcluded"
    step: str
    excluded: tuple[tuple[str, str], ...]
    fallback: bool = False


@_event
@dataclass(frozen=True, slots=True)
class ApprovalRequested(Event):
    """An approval step began: who may decide, how many must, and its timers."""

    type: ClassVar[str] = "ApprovalRequested"
    step: str
    assignments: tuple[Assignment, ...]
    required: int  # approvals needed; for mode "all" one per slot
    mode: str
    due_at: float | None
    timers: tuple[Timer, ...] = ()


@_event
@dataclass(frozen=True, slots=True)
class DecisionRecorded(Event):
    type: ClassVar[str] = "DecisionRecorded"
    step: str
    actor: str
    decision: str  # approve | reject | send_back
    slot: int
    on_behalf_of: str | None = None
    comment: str = ""


# TaskReassigned.reason of a task handed on because its holder left the organisation: a
# receiver already standing on the leaver's slot (a group's other member) is not added
# twice, and the leaver drops out with the event whose ``replace`` is True.
HANDED_ON = "handed_on"


@_event
@dataclass(frozen=True, slots=True)
class TaskReassigned(Event):
    """A task moved from one person to another: a delegation or an escalation.

    ``replace`` False adds ``to_user`` beside ``from_user`` on the same slot.
    """

    type: ClassVar[str] = "TaskReassigned"
    step: str
    from_user: str
    to_user: str
    actor: str | None
    reason: str  # delegated | escalated | reassigned | handed_on (HANDED_ON)
    replace: bool = True
    comment: str = ""


@_event
@dataclass(frozen=True, slots=True)
class TimerFired(Event):
    """A timer the workflow held came due; the events after it say what that did. A
    timer already cancelled or fired records nothing."""

    type: ClassVar[str] = "TimerFired"
    step: str
    key: str
    kind: str


@_event
@dataclass(frozen=True, slots=True)
class ReminderSent(Event):
    type: ClassVar[str] = "ReminderSent"
    step: str
    timer: str
    users: tuple[str, ...]


@_event
@dataclass(frozen=True, slots=True)
class Escalated(Event):
    type: ClassVar[str] = "Escalated"
    step: str
    timer: str
    assignments: tuple[Assignment, ...]  # the new assignees
    replace: bool


@_event
@dataclass(frozen=True, slots=True)
class StepCompleted(Event):
    """A step succeeded. ``compensate`` is True when it has an undo to run if the
    workflow later turns back."""

    type: ClassVar[str] = "StepCompleted"
    step: str
    compensate: bool = False


@_event
@dataclass(frozen=True, slots=True)
class SentBack(Event):
    """An approver asked for changes: the workflow returns to ``to_step``, or to the
    submitter when ``to_step`` is None."""

    type: ClassVar[str] = "SentBack"
    step: str
    to_step: str | None
    timers: tuple[Timer, ...] = ()


@_event
@dataclass(frozen=True, slots=True)
class Resubmitted(Event):
    type: ClassVar[str] = "Resubmitted"
    actor: str
    data: Mapping[str, Any]
    comment: str = ""


@_event
@dataclass(frozen=True, slots=True)
class ActivityScheduled(Event):
    """An attempt of one round of an action step (or of its undo) is due from
    ``not_before``.

    ``round`` counts the entries into the step (a send back to an earlier step enters
    it again); an undo names the round it undoes. ``heartbeat_timeout`` is how long the
    attempt may go without a heartbeat once it has given one; ``heartbeat_details`` are
    the last heartbeat's details of the attempt before, handed to this one so that a
    long job resumes where it was.

    v2 added ``round``, ``heartbeat_timeout`` and ``heartbeat_details``.
    """

    type: ClassVar[str] = "ActivityScheduled"
    schema_version: ClassVar[int] = 2
    step: str
    activity: str
    queue: str
    attempt: int
    not_before: float
    timeout: float
    undo: bool = False
    round: int = 1
    heartbeat_timeout: float | None = None
    heartbeat_details: Any = None


@_event
@dataclass(frozen=True, slots=True)
class ActivitySucceeded(Event):
    type: ClassVar[str] = "ActivitySucceeded"
    step: str
    attempt: int
    undo: bool = False
    result: Any = None


@_event
@dataclass(frozen=True, slots=True)
class ActivityFailed(Event):
    """One failed attempt. ``retry_delay`` is the chosen back-off, None when the
    failure is final."""

    type: ClassVar[str] = "ActivityFailed"
    step: str
    attempt: int
    error: str
    message: str = ""
    undo: bool = False
    retry_delay: float | None = None


@_event
@dataclass(frozen=True, slots=True)
class ActivityHeartbeat(Event):
    """The running attempt said it is alive at ``at``, with optional progress
    ``details`` (None keeps the details it had). ``timer`` replaces the attempt's
    heartbeat timer: if no heartbeat comes before it fires, the attempt fails with
    ``HeartbeatTimeout``. A step without ``heartbeat_timeout`` has no timer; its
    heartbeats are recorded only when they bring details."""

    type: ClassVar[str] = "ActivityHeartbeat"
    step: str
    attempt: int
    at: float
    timer: Timer | None = None
    details: Any = None
    undo: bool = False


@_event
@dataclass(frozen=True, slots=True)
class WaitStarted(Event):
    type: ClassVar[str] = "WaitStarted"
    step: str
    timers: tuple[Timer, ...]


@_event
@dataclass(frozen=True, slots=True)
class SignalAwaited(Event):
    type: ClassVar[str] = "SignalAwaited"
    step: str
    name: str
    timers: tuple[Timer, ...] = ()


@_event
@dataclass(frozen=True, slots=True)
class SignalReceived(Event):
    """An external signal. ``step`` is the step it resumed, None if nobody waited and
    no step of the workflow template ever waits for it (or the workflow is turning
    back). ``early`` is True when the step took a signal that had arrived before it
    began: the oldest ``SignalArrivedEarly`` of that name not yet used.

    v2 added ``early``."""

    type: ClassVar[str] = "SignalReceived"
    schema_version: ClassVar[int] = 2
    name: str
    payload: Mapping[str, Any]
    step: str | None
    early: bool = False


@_event
@dataclass(frozen=True, slots=True)
class SignalArrivedEarly(Event):
    """A signal that a step of the workflow template waits for arrived while no step
    waited for it. It is kept, in arrival order, and the next step that waits for
    ``name`` takes it when it begins (a ``SignalReceived`` with ``early`` True)."""

    type: ClassVar[str] = "SignalArrivedEarly"
    name: str
    payload: Mapping[str, Any]


@_event
@dataclass(frozen=True, slots=True)
class StepFailed(Event):
    type: ClassVar[str] = "StepFailed"
    step: str
    error: str
    message: str = ""


# The reason of a cancel that first undoes the steps done (CompensationStarted): the
# ending it leads to names nobody, so the history reads who cancelled, and why, here.
CANCELLED_BY = "cancelled by {actor}: {reason}"
_NOBODY = "the system"


def cancelled_by_reason(actor: str | None, reason: str) -> str:
    return CANCELLED_BY.format(actor=actor or _NOBODY, reason=reason).strip()


def cancelled_by(reason: str) -> tuple[str | None, str] | None:
    """(who cancelled, their reason) from a ``cancelled_by_reason``; None for any other
    reason."""
    prefix = CANCELLED_BY.split("{", 1)[0]
    if not reason.startswith(prefix):
        return None
    actor, colon, why = reason.removeprefix(prefix).partition(":")
    if not colon:
        return None
    return (None if actor.strip() == _NOBODY else actor.strip()), why.strip()


@_event
@dataclass(frozen=True, slots=True)
class CompensationStarted(Event):
    """The workflow turns back. ``outcome`` is the status it ends in once every undo
    has run: ROLLED_BACK after a failure, REJECTED after a rejection."""

    type: ClassVar[str] = "CompensationStarted"
    outcome: str
    reason: str


@_event
@dataclass(frozen=True, slots=True)
class WorkflowCompleted(Event):
    type: ClassVar[str] = "WorkflowCompleted"


@_event
@dataclass(frozen=True, slots=True)
class WorkflowRejected(Event):
    type: ClassVar[str] = "WorkflowRejected"


@_event
@dataclass(frozen=True, slots=True)
class WorkflowRolledBack(Event):
    type: ClassVar[str] = "WorkflowRolledBack"


@_event
@dataclass(frozen=True, slots=True)
class CompensationFailed(Event):
    type: ClassVar[str] = "CompensationFailed"
    step: str


@_event
@dataclass(frozen=True, slots=True)
class WorkflowCancelled(Event):
    type: ClassVar[str] = "WorkflowCancelled"
    actor: str | None
    reason: str = ""


@_event
@dataclass(frozen=True, slots=True)
class StepRetried(Event):
    """An admin ran a rolled-back workflow again from ``from_step``, reopening it.
    No longer recorded (a finished workflow stays finished: ``WorkflowRestarted``);
    kept so that histories that hold it replay."""

    type: ClassVar[str] = "StepRetried"
    actor: str
    reason: str
    step: str  # the step that had failed
    from_step: str


@_event
@dataclass(frozen=True, slots=True)
class CompensationRetried(Event):
    type: ClassVar[str] = "CompensationRetried"
    actor: str
    reason: str
    step: str  # whose undo runs again


@_event
@dataclass(frozen=True, slots=True)
class CompensationResolved(Event):
    """An admin said the failed undo was done by hand, and the workflow moved to
    ``outcome``. No longer recorded (``CompensationSettled`` keeps the status); kept so
    that histories that hold it replay."""

    type: ClassVar[str] = "CompensationResolved"
    actor: str
    reason: str
    step: str
    outcome: str


@_event
@dataclass(frozen=True, slots=True)
class WorkflowRestarted(Event):
    """The rolled-back workflow was started again as the new workflow ``restarted_as``
    (same data, the current workflow template version). Its own status does not move."""

    type: ClassVar[str] = "WorkflowRestarted"
    actor: str
    reason: str
    step: str  # the step that had failed for good
    restarted_as: str


@_event
@dataclass(frozen=True, slots=True)
class UndoRetried(Event):
    """An admin runs the failed undo of ``step`` once more on the finished workflow;
    the status stays COMPENSATION_FAILED (an ``ActivityScheduled`` follows)."""

    type: ClassVar[str] = "UndoRetried"
    actor: str
    reason: str
    step: str


@_event
@dataclass(frozen=True, slots=True)
class CompensationSettled(Event):
    """The failed undo is settled: done by hand (``actor`` and ``reason`` say who and
    why), or by retried undos that all succeeded (``actor`` None). ``outcome`` is the
    status the compensation set out to reach; the workflow's own stays
    COMPENSATION_FAILED, the record of what happened."""

    type: ClassVar[str] = "CompensationSettled"
    actor: str | None
    reason: str
    step: str
    outcome: str
    by_hand: bool = True


@_event
@dataclass(frozen=True, slots=True)
class TimerRearmed(Event):
    type: ClassVar[str] = "TimerRearmed"
    actor: str
    reason: str
    key: str


@_event
@dataclass(frozen=True, slots=True)
class FileAttached(Event):
    """``actor`` added a file to the request: stored once under its SHA-256, so this
    event (and the hash chain over it) names exactly the bytes that were added.
    ``content_type`` is what the content was sniffed as, not what the name says."""

    type: ClassVar[str] = "FileAttached"
    actor: str
    sha256: str
    name: str
    size: int
    content_type: str


@_event
@dataclass(frozen=True, slots=True)
class CommentAdded(Event):
    """``actor`` wrote ``comment`` on the request's conversation; ``mentions`` are the
    people it named as ``@name``, each told by mail. The text is kept under
    ``comment``, as a decision's is, so the history and the export read it alike. It
    changes no step and no status."""

    type: ClassVar[str] = "CommentAdded"
    actor: str
    comment: str
    mentions: tuple[str, ...] = ()


@_event
@dataclass(frozen=True, slots=True)
class ApproverAdded(Event):
    """``actor`` (an admin) added ``user`` as an approver of ``step``, the approval step
    the workflow waits in, because of ``reason``. ``assignments`` are the tasks it
    opened for them: in mode ``all`` one on each slot still open, otherwise one."""

    type: ClassVar[str] = "ApproverAdded"
    step: str
    user: str
    actor: str
    reason: str
    assignments: tuple[Assignment, ...]


def _activity_scheduled_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 had no rounds (every entry into a step was round 1) and no heartbeats."""
    return {**payload, "round": 1, "heartbeat_timeout": None, "heartbeat_details": None}


def _workflow_started_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 had no origin: every start was its submitter's own."""
    return {**payload, "origin": None}


def _workflow_started_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 recorded no conversion: conditions compared amounts as they were."""
    return {**payload, "conversion": None}


def _signal_received_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 kept no early signals: every signal was taken as it arrived, or never."""
    return {**payload, "early": False}


# (type, stored version) -> function upgrading the payload by one version.
UPCASTERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {
    ("ActivityScheduled", 1): _activity_scheduled_v1,
    ("WorkflowStarted", 1): _workflow_started_v1,
    ("WorkflowStarted", 2): _workflow_started_v2,
    ("SignalReceived", 1): _signal_received_v1,
}


def _pair(item: Any) -> tuple[str, str]:
    user, reason = item
    return (user, reason)


_NESTED: dict[str, Callable[[Any], Any]] = {
    "assignments": Assignment.from_dict,
    "timers": Timer.from_dict,
    "excluded": _pair,
}
_TUPLES = {"users", "mentions"}


def event_from_dict(doc: Mapping[str, Any]) -> Event:
    """Read an event back from its stored shape, upgrading older versions."""
    try:
        cls = EVENT_TYPES[doc["type"]]
    except KeyError as exc:
        raise ValueError(f"unknown event type {doc.get('type')!r}") from exc
    payload = dict(doc)
    version = int(payload.pop("v", 1))
    payload.pop("type")
    if version > cls.schema_version:
        raise ValueError(f"{cls.type} v{version} is newer than this code (v{cls.schema_version})")
    while version < cls.schema_version:
        upcast = UPCASTERS.get((cls.type, version))
        if upcast is None:
            raise ValueError(f"no upcaster for {cls.type} v{version}")
        payload = upcast(payload)
        version += 1
    for name, parse in _NESTED.items():
        if name in payload:
            payload[name] = tuple(parse(item) for item in payload[name])
    for name in _TUPLES:
        if name in payload:
            payload[name] = tuple(payload[name])
    # ActivityHeartbeat's ``timer`` is a Timer; ReminderSent's and Escalated's a key
    if "timer" in payload and isinstance(payload["timer"], Mapping):
        payload["timer"] = Timer.from_dict(payload["timer"])
    return cls(**payload)
