"""The workflow status machine: every status, and the one table of the moves between
them, keyed by the event that makes each move.

``evolve`` checks every event against it; the app's model builds its django-fsm
transitions from it (``approvals.models.workflows``), and the command path and the
rebuild check their writes of the status column against it. Nothing else lists
a move.

Two columns hold a workflow's status. ``status`` is this machine's: NEW, RUNNING,
COMPENSATING, then one of the five terminal statuses. ``public_status`` is what people
and the API read, derived from the state by ``state.public_status`` and never moved on
its own: ``PENDING_<STEP>`` (``PENDING_SUBMITTER`` while the submitter is asked for
changes) is RUNNING waiting on someone, APPROVED is COMPLETED, WITHDRAWN is CANCELLED
by the submitter; every other public status is the status itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import events as ev

NEW = "NEW"
RUNNING = "RUNNING"
COMPENSATING = "COMPENSATING"
COMPLETED = "COMPLETED"
REJECTED = "REJECTED"
ROLLED_BACK = "ROLLED_BACK"
COMPENSATION_FAILED = "COMPENSATION_FAILED"
CANCELLED = "CANCELLED"
# Every status, in the order a workflow can reach them; the app's model choices are
# derived from this list.
STATUSES = (
    NEW,
    RUNNING,
    COMPENSATING,
    COMPLETED,
    REJECTED,
    ROLLED_BACK,
    COMPENSATION_FAILED,
    CANCELLED,
)
TERMINAL = frozenset({COMPLETED, REJECTED, ROLLED_BACK, COMPENSATION_FAILED, CANCELLED})

# The public statuses that are not a status of the machine, and the status each reads.
APPROVED = "APPROVED"
WITHDRAWN = "WITHDRAWN"
PENDING_PREFIX = "PENDING_"


def status_of_public(public: str) -> str:
    """The machine's status behind a public status (``PENDING_MANAGER`` -> RUNNING)."""
    if public.startswith(PENDING_PREFIX):
        return RUNNING
    if public == APPROVED:
        return COMPLETED
    if public == WITHDRAWN:
        return CANCELLED
    if public not in STATUSES:
        raise ValueError(f"{public!r} is not a workflow status")
    return public


@dataclass(frozen=True, slots=True)
class StatusTransition:
    """One move: the event that makes it, the model's name for it, the statuses it
    leaves and the one it reaches."""

    event: type[ev.Event]
    name: str
    sources: tuple[str, ...]
    target: str


# Every move a command can record. No move leaves a terminal status: a finished
# workflow stays finished (templates_engine.admin_operations).
STATUS_TRANSITIONS: tuple[StatusTransition, ...] = (
    StatusTransition(ev.WorkflowStarted, "begin", (NEW,), RUNNING),
    StatusTransition(ev.WorkflowCompleted, "complete", (RUNNING,), COMPLETED),
    StatusTransition(ev.CompensationStarted, "compensate", (RUNNING,), COMPENSATING),
    StatusTransition(ev.WorkflowRolledBack, "roll_back", (COMPENSATING,), ROLLED_BACK),
    StatusTransition(ev.WorkflowRejected, "reject", (COMPENSATING,), REJECTED),
    StatusTransition(
        ev.CompensationFailed, "fail_compensation", (COMPENSATING,), COMPENSATION_FAILED
    ),
    StatusTransition(ev.WorkflowCancelled, "cancel", (RUNNING, COMPENSATING), CANCELLED),
)

# Moves that older histories hold and ``evolve`` still replays, but that nothing records
# any more (their events are kept for replay only): an admin once reopened a finished
# workflow. Neither the model nor the command path allows them.
REPLAYED_TRANSITIONS: tuple[StatusTransition, ...] = (
    StatusTransition(ev.StepRetried, "retry_step", (ROLLED_BACK,), RUNNING),
    StatusTransition(
        ev.CompensationRetried, "retry_compensation", (COMPENSATION_FAILED,), COMPENSATING
    ),
    *(
        StatusTransition(ev.CompensationResolved, f"settle_{o.lower()}", (COMPENSATION_FAILED,), o)
        for o in (ROLLED_BACK, REJECTED, CANCELLED)
    ),
)

_RECORDED: dict[type[ev.Event], StatusTransition] = {t.event: t for t in STATUS_TRANSITIONS}
assert len(_RECORDED) == len(STATUS_TRANSITIONS), "one move per event"
# event -> {(source, target)} of every move evolve accepts
_ACCEPTED: dict[type[ev.Event], frozenset[tuple[str, str]]] = {}
for _t in (*STATUS_TRANSITIONS, *REPLAYED_TRANSITIONS):
    _ACCEPTED[_t.event] = _ACCEPTED.get(_t.event, frozenset()) | {
        (s, _t.target) for s in _t.sources
    }
del _t


class StatusMoveRefused(Exception):
    """A status change the status machine does not allow. A bug, not a user's mistake:
    nothing was written."""


def transition_for(event_type: type[ev.Event]) -> StatusTransition | None:
    """The move an event of this type records, None for an event that keeps the status."""
    return _RECORDED.get(event_type)


def allowed_moves() -> frozenset[tuple[str, str]]:
    """Every (source, target) a command may record."""
    return frozenset((s, t.target) for t in STATUS_TRANSITIONS for s in t.sources)


def move_check(event: ev.Event, source: str, target: str) -> None:
    """Raise StatusMoveRefused unless ``event`` may take a workflow from ``source`` to
    ``target`` in a replay: an event that is no move keeps the status."""
    moves = _ACCEPTED.get(type(event))
    if moves is None:
        if source != target:
            raise StatusMoveRefused(
                f"a {event.type} event cannot change the status ({source} -> {target})"
            )
    elif (source, target) not in moves:
        raise StatusMoveRefused(
            f"a {event.type} event cannot take a workflow from {source} to {target}"
        )


def recorded_move_check(event_type: type[ev.Event], source: str) -> str:
    """The status a command recording an event of ``event_type`` leaves a workflow in,
    from ``source``; raises StatusMoveRefused for a move no command may record."""
    move = _RECORDED.get(event_type)
    if move is None:
        if event_type in _ACCEPTED:
            raise StatusMoveRefused(f"a {event_type.type} event is replayed, never recorded")
        return source
    if source not in move.sources:
        raise StatusMoveRefused(
            f"a {event_type.type} event cannot take a workflow from {source}"
            f" (only from {', '.join(move.sources)})"
        )
    return move.target


def moving_events() -> frozenset[type[ev.Event]]:
    """The event types that move the status (recorded or replayed)."""
    return frozenset(_ACCEPTED)
