"""Commands: the inputs of the decider, one per thing that can happen to a workflow."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

DECISIONS = ("approve", "reject", "send_back", "delegate")


class Command:
    __slots__ = ()
    type: ClassVar[str]
    schema_version: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class Start(Command):
    """``origin``: what files the start in the submitter's name, recorded as given in
    the WorkflowStarted event (a schedule, and who made it); None for a start the
    submitter makes in person."""

    type: ClassVar[str] = "Start"
    data: Mapping[str, Any]
    submitter: str | None = None
    origin: Mapping[str, Any] | None = None
    # The base currency and the rates conditions compare amounts at (money.py);
    # recorded in the WorkflowStarted event. None: amounts are compared as they are.
    conversion: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Decide(Command):
    """An approver's decision on the current approval step.

    ``on_behalf_of`` names the assignee the actor stands in for (a delegation
    active now); ``delegate_to`` is required with the ``delegate`` decision.
    ``data`` is only for the submitter's resubmission after a send-back.
    """

    type: ClassVar[str] = "Decide"
    actor: str
    decision: str
    comment: str = ""
    on_behalf_of: str | None = None
    delegate_to: str | None = None
    data: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class TimerFired(Command):
    type: ClassVar[str] = "TimerFired"
    key: str


# The outcome and heartbeat commands name the attempt they are about by step, undo and
# attempt number, and optionally by round: when ``round`` is given, a command for
# another round than the one awaited is stale and ignored.


@dataclass(frozen=True, slots=True)
class ActivityCompleted(Command):
    type: ClassVar[str] = "ActivityCompleted"
    step: str
    attempt: int
    undo: bool = False
    result: Any = None
    round: int | None = None


@dataclass(frozen=True, slots=True)
class ActivityFailed(Command):
    type: ClassVar[str] = "ActivityFailed"
    step: str
    attempt: int
    error: str
    message: str = ""
    undo: bool = False
    # False when the activity itself knows a retry cannot help (an HTTP 4xx).
    retryable: bool = True
    round: int | None = None


@dataclass(frozen=True, slots=True)
class Heartbeat(Command):
    """The running attempt is alive; ``details`` (JSON, optional) is its progress,
    handed to the next attempt if this one fails. Extends the attempt's heartbeat
    lease when its step sets ``heartbeat_timeout``; otherwise it changes nothing."""

    type: ClassVar[str] = "Heartbeat"
    step: str
    attempt: int
    details: Any = None
    undo: bool = False
    round: int | None = None


@dataclass(frozen=True, slots=True)
class Signal(Command):
    type: ClassVar[str] = "Signal"
    name: str
    payload: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Cancel(Command):
    type: ClassVar[str] = "Cancel"
    actor: str | None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Reassign(Command):
    """An administrator moves a task from one assignee to another. ``actor`` is None
    when the organisation's directory moves it (the assignee left)."""

    type: ClassVar[str] = "Reassign"
    actor: str | None
    from_user: str
    to_user: str
    comment: str = ""
    # ``left``: ``from_user`` left the organisation. Their task is handed on
    # (``TaskReassigned`` reason ``handed_on``) to ``to_user`` and to each of ``also_to``;
    # a receiver already holding the same slot (a group's other member) keeps their task
    # and the leaver simply drops out of it.
    left: bool = False
    also_to: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Attach(Command):
    """``actor`` adds a file (a receipt, a quote) already stored under ``sha256``; the
    app decides who may, and stores the bytes before it sends this."""

    type: ClassVar[str] = "Attach"
    actor: str
    sha256: str
    name: str
    size: int
    content_type: str


@dataclass(frozen=True, slots=True)
class Comment(Command):
    """``actor`` writes ``text`` on the request's conversation, while it runs or after
    it has finished (a question after the fact). ``mentions`` are the people the text
    names as ``@name``; the app checks that each may read the request before it sends
    this. Changes no step: it is recorded, and the people concerned are told."""

    type: ClassVar[str] = "Comment"
    actor: str
    text: str
    mentions: tuple[str, ...] = ()


# -- operations: an organisation admin deals with a workflow that needs a person ------
# Each carries who does it and why; the events they cause record both.


@dataclass(frozen=True, slots=True)
class RetryStep(Command):
    """A workflow rolled back after a step failed for good was started again as the new
    workflow ``restarted_as`` (same data, the current workflow template version). A
    finished workflow stays finished: this only records the link, with who and why."""

    type: ClassVar[str] = "RetryStep"
    actor: str
    reason: str
    restarted_as: str = ""


@dataclass(frozen=True, slots=True)
class RetryCompensation(Command):
    """One more attempt of the undo that failed for good, run on the finished workflow
    (its status stays COMPENSATION_FAILED); the undos below it follow, and when all
    have succeeded the failure is settled."""

    type: ClassVar[str] = "RetryCompensation"
    actor: str
    reason: str


@dataclass(frozen=True, slots=True)
class ResolveByHand(Command):
    """The undo that failed (and those below it) was done by hand: the failure is
    settled, with who and why; the status stays COMPENSATION_FAILED."""

    type: ClassVar[str] = "ResolveByHand"
    actor: str
    reason: str


@dataclass(frozen=True, slots=True)
class RearmTimer(Command):
    """A timer whose delivery kept failing was parked; deliver it again now."""

    type: ClassVar[str] = "RearmTimer"
    actor: str
    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class AddApprover(Command):
    """An admin adds ``user`` as an approver of ``step``, the approval step the running
    workflow waits in, so that someone can finish it (its approvers left, or an
    escalation left nobody able to give the approvals it still needs). ``user`` gets
    an open task beside those who hold one."""

    type: ClassVar[str] = "AddApprover"
    actor: str
    user: str
    step: str
    reason: str


OPERATIONS = (RetryStep, RetryCompensation, ResolveByHand, RearmTimer, AddApprover)
