"""The decider: ``decide`` turns a command into events, ``replay`` folds events into
state. Neither reads a clock, a database or the network."""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import commands as cmd
from . import errors
from . import events as ev
from .admin_operations import on_operation, on_retried_undo_outcome
from .builder import Builder
from .comments import on_comment
from .context import Context
from .definition import Definition
from .errors import CommandRejected
from .expressions import data_problems
from .money import conversion_problem
from .state import NEW, RUNNING, SUBMITTER_STEP, State, evolve
from .steps import ActionStep, SignalStep
from .steps.approval import NOT_WAITING_FOR

# NOT_YOUR_STEP where no approval step is open (see steps.approval for where one is).
NO_DECISION_AWAITED = "This request is not waiting for a decision."
WAITING_FOR_SUBMITTER = (
    "This request is waiting for its submitter's changes; it is not yours to decide."
)


def decide(
    definition: Definition, state: State, command: cmd.Command, ctx: Context
) -> list[ev.Event]:
    """Return the events ``command`` causes now; raise CommandRejected if it cannot
    apply (nothing happened). A command that is stale (a timer already cancelled, an
    outcome for an attempt no longer awaited) returns no events."""
    b = Builder(definition, state, ctx)
    if isinstance(command, cmd.Start):
        _on_start(b, command)
        return b.events
    if isinstance(command, cmd.OPERATIONS):
        on_operation(b, command)  # some apply to a finished workflow
        return b.events
    if state.status == NEW:
        raise CommandRejected(errors.NOT_STARTED, "the workflow has not started")
    if isinstance(command, cmd.Attach):
        _on_attach(b, command)  # a receipt may come after the decision too
        return b.events
    if isinstance(command, cmd.Comment):
        on_comment(b, command)  # also on a finished workflow: questions after the fact
        return b.events
    if state.terminal:
        if isinstance(command, cmd.Decide | cmd.Signal | cmd.Cancel | cmd.Reassign):
            raise CommandRejected(
                errors.WORKFLOW_FINISHED, f"the workflow has finished ({state.status})"
            )
        if isinstance(command, cmd.ActivityCompleted | cmd.ActivityFailed):
            on_retried_undo_outcome(b, command)  # an admin's retried undo, if any
        return b.events
    if isinstance(command, cmd.Decide):
        _on_decide(b, command)
    elif isinstance(command, cmd.TimerFired):
        _on_timer(b, command)
    elif isinstance(command, cmd.ActivityCompleted | cmd.ActivityFailed):
        _on_activity_outcome(b, command)
    elif isinstance(command, cmd.Heartbeat):
        _on_heartbeat(b, command)
    elif isinstance(command, cmd.Signal):
        _on_signal(b, command)
    elif isinstance(command, cmd.Cancel):
        b.cancel(command.actor, command.reason)
    elif isinstance(command, cmd.Reassign):
        _on_reassign(b, command)
    else:
        raise TypeError(f"unknown command {command!r}")
    return b.events


_SIGNALS = "signals"  # where state.evolve keeps signal payloads in the workflow data


def _on_start(b: Builder, c: cmd.Start) -> None:
    if b.state.status != NEW:
        raise CommandRejected(errors.ALREADY_STARTED, "the workflow has already started")
    problems = b.definition.data_errors(c.data) or data_problems(c.data)
    if problems:
        raise CommandRejected(errors.INVALID_DATA, "; ".join(problems))
    if (problem := conversion_problem(c.conversion)) is not None:
        raise CommandRejected(errors.INVALID_DATA, problem)
    d = b.definition
    origin = dict(c.origin) if c.origin is not None else None
    conversion = dict(c.conversion) if c.conversion is not None else None
    b.emit(ev.WorkflowStarted(d.key, d.version, dict(c.data), c.submitter, origin, conversion))
    b.advance(0)


def _on_decide(b: Builder, c: cmd.Decide) -> None:
    if c.decision not in cmd.DECISIONS:
        raise CommandRejected(
            errors.INVALID_DECISION, f"decision must be one of {', '.join(cmd.DECISIONS)}"
        )
    step_id = b.state.step
    if step_id == SUBMITTER_STEP:
        _on_resubmit(b, c)
        return
    if not b.state.assignments or step_id is None:
        message = (
            NOT_WAITING_FOR.format(step=b.definition.step_title(step_id))
            if step_id is not None
            else NO_DECISION_AWAITED
        )
        raise CommandRejected(errors.NOT_YOUR_STEP, message)
    b.definition.step(step_id).on_command(b, c)


def _on_resubmit(b: Builder, c: cmd.Decide) -> None:
    """The submitter answers a send-back: approve resubmits, reject withdraws."""
    if c.actor != b.state.submitter:
        raise CommandRejected(errors.NOT_YOUR_STEP, WAITING_FOR_SUBMITTER)
    if c.decision == "reject":
        b.cancel(c.actor, c.comment or "withdrawn by the submitter")
        return
    if c.decision != "approve":
        raise CommandRejected(errors.INVALID_DECISION, "the submitter can resubmit or withdraw")
    data = {**b.state.data, **(c.data or {})}
    # signal payloads are kept in the data by the engine, not supplied by the submitter
    supplied = {k: v for k, v in data.items() if k != _SIGNALS or _SIGNALS in (c.data or {})}
    problems = b.definition.data_errors(supplied) or data_problems(data)
    if problems:
        raise CommandRejected(errors.INVALID_DATA, "; ".join(problems))
    target = b.state.resubmit_step
    assert target is not None
    b.emit(ev.Resubmitted(c.actor, data, c.comment))
    b.advance(b.definition.index(target))


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
FILE_NAME_MAX = 255
ATTACHMENT_UNREADABLE = (
    "A file is attached by its SHA-256 (64 lowercase hex digits), a name of 1 to "
    f"{FILE_NAME_MAX} characters, its size and its type."
)


def _on_attach(b: Builder, c: cmd.Attach) -> None:
    if (
        not _SHA256.match(c.sha256)
        or not 0 < len(c.name) <= FILE_NAME_MAX
        or c.size < 0
        or not c.content_type
    ):
        raise CommandRejected(errors.INVALID_DATA, ATTACHMENT_UNREADABLE)
    b.emit(ev.FileAttached(c.actor, c.sha256, c.name, c.size, c.content_type))


def _on_timer(b: Builder, c: cmd.TimerFired) -> None:
    timer = next((t for t in b.state.timers if t.key == c.key), None)
    if timer is None:
        return  # cancelled by a decision, or fired already
    b.emit(ev.TimerFired(timer.step, timer.key, timer.kind))
    b.definition.step(timer.step).on_timer(b, timer.kind, timer.key)


def _awaited(b: Builder, c: cmd.ActivityCompleted | cmd.ActivityFailed | cmd.Heartbeat) -> bool:
    """Whether ``c`` is about the attempt the workflow waits for."""
    pending = b.state.activity
    if pending is None:
        return False
    if (pending.step, pending.attempt, pending.undo) != (c.step, c.attempt, c.undo):
        return False
    return c.round is None or c.round == pending.round


def _on_activity_outcome(b: Builder, c: cmd.ActivityCompleted | cmd.ActivityFailed) -> None:
    if not _awaited(b, c):
        return  # an outcome for an attempt no longer awaited: a duplicate
    step = b.definition.step(c.step)
    assert isinstance(step, ActionStep)
    step.on_outcome(b, c)


def _on_heartbeat(b: Builder, c: cmd.Heartbeat) -> None:
    if not _awaited(b, c):
        return  # a late heartbeat of an attempt that has ended
    step = b.definition.step(c.step)
    assert isinstance(step, ActionStep)
    step.on_heartbeat(b, c)


def _on_signal(b: Builder, c: cmd.Signal) -> None:
    """A signal the current step waits for completes it. One that a step of the
    workflow template waits for, arriving while the workflow runs but no step waits for
    it, is kept for the next step that does (a second one after the step took the first
    too: signals are messages, each delivered once, in arrival order). Any other is
    recorded and changes nothing: no step would ever take it."""
    step_id = b.state.step
    if b.state.awaiting_signal == c.name and step_id is not None:
        b.definition.step(step_id).on_command(b, c)
    elif b.state.status == RUNNING and _awaited_by_a_step(b.definition, c.name):
        b.emit(ev.SignalArrivedEarly(c.name, dict(c.payload)))
    else:
        b.emit(ev.SignalReceived(c.name, dict(c.payload), None))


def _awaited_by_a_step(definition: Definition, name: str) -> bool:
    return any(isinstance(s, SignalStep) and s.signal == name for s in definition.steps)


def _on_reassign(b: Builder, c: cmd.Reassign) -> None:
    step_id = b.state.step
    if step_id is None or step_id == SUBMITTER_STEP or not b.state.assignments:
        raise CommandRejected(errors.NOT_YOUR_STEP, "the workflow has no open task to reassign")
    b.definition.step(step_id).on_command(b, c)


def replay(definition: Definition, events: Iterable[ev.Event]) -> State:
    """The state after ``events``: a fold of ``evolve`` from the initial state.

    ``definition`` is accepted so that callers pin the version a history runs under;
    the fold itself needs only the events.
    """
    state = State()
    for event in events:
        state = evolve(state, event)
    return state


def attempt_history(events: Iterable[ev.Event]) -> list[str]:
    """One ``step:outcome:n`` entry per activity attempt (``undo:<step>`` for undos);
    an attempt of a later round than the first names it: ``reserve#2:ok:1``."""
    out: list[str] = []
    rounds: dict[tuple[str, bool], int] = {}
    for e in events:
        if isinstance(e, ev.ActivityScheduled):
            rounds[(e.step, e.undo)] = e.round
        elif isinstance(e, ev.ActivitySucceeded | ev.ActivityFailed):
            name = f"undo:{e.step}" if e.undo else e.step
            round_ = rounds.get((e.step, e.undo), 1)
            if round_ > 1:
                name = f"{name}#{round_}"
            outcome = "ok" if isinstance(e, ev.ActivitySucceeded) else "error"
            out.append(f"{name}:{outcome}:{e.attempt}")
    return out
