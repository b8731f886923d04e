"""What an organisation admin may do to a workflow that needs a person: run a rolled
back workflow again from the step that failed, retry the undo that failed, settle a
failed undo done by hand, or deliver again a timer whose delivery was parked. Each is
a command with who and why, and each leaves an event saying so."""

from __future__ import annotations

from . import commands as cmd
from . import errors
from . import events as ev
from .builder import Builder
from .errors import CommandRejected
from .state import COMPENSATION_FAILED, ROLLED_BACK, SUBMITTER_STEP
from .steps import ActionStep

NOT_ROLLED_BACK = "only a workflow rolled back after a step failed can retry it (it is {status})"
NOT_COMPENSATION_FAILED = "only a workflow whose undo failed can do this (it is {status})"
NO_SUCH_TIMER = "the workflow has no pending timer {key!r}"
REASON_REQUIRED = "say why: the reason goes into the history"
NOT_ALLOWED = "NOT_ALLOWED"
REASON_MISSING = "REASON_REQUIRED"


def on_operation(b: Builder, c: cmd.Command) -> None:
    """Dispatch one of ``cmd.OPERATIONS``; each checks the status it needs itself
    (some apply to a finished workflow)."""
    if not getattr(c, "reason", "").strip():
        raise CommandRejected(REASON_MISSING, REASON_REQUIRED)
    if isinstance(c, cmd.RetryStep):
        _retry_step(b, c)
    elif isinstance(c, cmd.RetryCompensation):
        _retry_compensation(b, c)
    elif isinstance(c, cmd.ResolveByHand):
        _resolve_by_hand(b, c)
    elif isinstance(c, cmd.RearmTimer):
        _rearm_timer(b, c)
    else:
        raise TypeError(f"unknown operation {c!r}")


def _retry_step(b: Builder, c: cmd.RetryStep) -> None:
    s = b.state
    failed = s.failed_step
    if s.status != ROLLED_BACK or failed is None or failed == SUBMITTER_STEP:
        raise CommandRejected(NOT_ALLOWED, NOT_ROLLED_BACK.format(status=s.status))
    # Steps whose work the rollback undid must run again before the failed one.
    index = min(b.definition.index(step) for step in (failed, *s.undone))
    start = b.definition.steps[index].id
    b.emit(ev.StepRetried(c.actor, c.reason, failed, start))
    b.advance(index)


def _undo_on_top(b: Builder) -> tuple[ActionStep, int]:
    s = b.state
    if s.status != COMPENSATION_FAILED or not s.compensations:
        raise CommandRejected(NOT_ALLOWED, NOT_COMPENSATION_FAILED.format(status=s.status))
    step_id, round_ = s.compensations[-1]
    return b.definition.action(step_id), round_


def _retry_compensation(b: Builder, c: cmd.RetryCompensation) -> None:
    step, round_ = _undo_on_top(b)
    undo = step.compensate
    assert undo is not None, f"{step.id} was recorded as compensable"
    b.emit(ev.CompensationRetried(c.actor, c.reason, step.id))
    attempt = b.state.failed_attempt + 1
    b.emit(undo.scheduled(step.id, attempt, b.ctx.now, undo=True, round=round_))


def _resolve_by_hand(b: Builder, c: cmd.ResolveByHand) -> None:
    step, _ = _undo_on_top(b)
    outcome = b.state.outcome or ROLLED_BACK
    b.emit(ev.CompensationResolved(c.actor, c.reason, step.id, outcome))


def _rearm_timer(b: Builder, c: cmd.RearmTimer) -> None:
    if b.state.terminal:
        raise CommandRejected(
            errors.WORKFLOW_FINISHED, f"the workflow has finished ({b.state.status})"
        )
    if all(t.key != c.key for t in b.state.timers):
        raise CommandRejected(NOT_ALLOWED, NO_SUCH_TIMER.format(key=c.key))
    b.emit(ev.TimerRearmed(c.actor, c.reason, c.key))
