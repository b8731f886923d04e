"""What an organisation admin may do to a workflow that needs a person: record that a
rolled-back workflow was started again as a new one, retry the undo that failed,
settle a failed undo done by hand, deliver again a timer whose delivery was parked, or
add an approver to the approval step a running workflow waits in.
Each is a command with who and why, and each leaves an event saying so.

A finished workflow stays finished: no operation moves a terminal status. A restart is
a new workflow (the app starts it; the old one records the link); a retried undo runs
on the finished workflow and, when it and the undos below it succeed, settles the
failure, as settling by hand does; the status stays COMPENSATION_FAILED."""

from __future__ import annotations

from . import commands as cmd
from . import errors
from . import events as ev
from .builder import Builder
from .errors import CommandRejected
from .state import COMPENSATION_FAILED, ROLLED_BACK, RUNNING, SUBMITTER_STEP
from .steps import ActionStep
from .steps.approval import ApprovalStep

NOT_ROLLED_BACK = "only a workflow rolled back after a step failed can retry it (it is {status})"
NOT_COMPENSATION_FAILED = "only a workflow whose undo failed can do this (it is {status})"
NO_SUCH_TIMER = "the workflow has no pending timer {key!r}"
ALREADY_RESTARTED = "the workflow was already started again as {restarted_as}"
RESTART_NAMES_NO_WORKFLOW = "say which new workflow it was started again as"
ALREADY_SETTLED = "the failed undo has already been settled"
UNDO_RUNNING = "an undo is running again; wait for its outcome"
UNDONE_ON_RETRY = "the undo succeeded when retried"
REASON_REQUIRED = "say why: the reason goes into the history"
NOT_RUNNING = "only a running request can be given another approver (it is {status})"
NOT_AT_STEP = "the request does not wait in the {step} step now; it waits in {current}"
NOT_WAITING = "the request does not wait in any step now"
NOT_AN_APPROVAL = "the {step} step is not an approval step: nobody approves it"
WAITS_FOR_SUBMITTER = "the request waits for its submitter's changes, not for an approval"
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
    elif isinstance(c, cmd.AddApprover):
        _add_approver(b, c)
    else:
        raise TypeError(f"unknown operation {c!r}")


def _retry_step(b: Builder, c: cmd.RetryStep) -> None:
    s = b.state
    failed = s.failed_step
    if s.status != ROLLED_BACK or failed is None or failed == SUBMITTER_STEP:
        raise CommandRejected(NOT_ALLOWED, NOT_ROLLED_BACK.format(status=s.status))
    if s.restarted_as is not None:
        raise CommandRejected(NOT_ALLOWED, ALREADY_RESTARTED.format(restarted_as=s.restarted_as))
    if not c.restarted_as:
        raise CommandRejected(NOT_ALLOWED, RESTART_NAMES_NO_WORKFLOW)
    b.emit(ev.WorkflowRestarted(c.actor, c.reason, failed, c.restarted_as))


def _undo_on_top(b: Builder) -> tuple[ActionStep, int]:
    s = b.state
    if s.status != COMPENSATION_FAILED:
        raise CommandRejected(NOT_ALLOWED, NOT_COMPENSATION_FAILED.format(status=s.status))
    if s.settled or not s.compensations:
        raise CommandRejected(NOT_ALLOWED, ALREADY_SETTLED)
    if s.activity is not None:
        raise CommandRejected(NOT_ALLOWED, UNDO_RUNNING)
    step_id, round_ = s.compensations[-1]
    return b.definition.action(step_id), round_


def _retry_compensation(b: Builder, c: cmd.RetryCompensation) -> None:
    step, round_ = _undo_on_top(b)
    undo = step.compensate
    assert undo is not None, f"{step.id} was recorded as compensable"
    b.emit(ev.UndoRetried(c.actor, c.reason, step.id))
    attempt = b.state.failed_attempt + 1
    b.emit(undo.scheduled(step.id, attempt, b.ctx.now, undo=True, round=round_))


def on_retried_undo_outcome(b: Builder, c: cmd.ActivityCompleted | cmd.ActivityFailed) -> None:
    """The outcome of an undo an admin retried on a finished workflow: one attempt, no
    automatic retries. A success runs the next undo down the stack (once each), and
    settles the failure when none is left; a failure leaves it for a person."""
    pending = b.state.activity
    if pending is None or (pending.step, pending.attempt, pending.undo) != (
        c.step,
        c.attempt,
        c.undo,
    ):
        return  # not the attempt the workflow waits for: a duplicate
    if c.round is not None and c.round != pending.round:
        return
    if isinstance(c, cmd.ActivityFailed):
        b.emit(ev.ActivityFailed(c.step, c.attempt, c.error, c.message, True))
        return
    b.emit(ev.ActivitySucceeded(c.step, c.attempt, True, c.result))
    if b.state.compensations:
        step_id, round_ = b.state.compensations[-1]
        undo = b.definition.action(step_id).compensate
        assert undo is not None, f"{step_id} was recorded as compensable"
        b.emit(undo.scheduled(step_id, 1, b.ctx.now, undo=True, round=round_))
        return
    outcome = b.state.outcome or ROLLED_BACK
    b.emit(ev.CompensationSettled(None, UNDONE_ON_RETRY, c.step, outcome, by_hand=False))


def _resolve_by_hand(b: Builder, c: cmd.ResolveByHand) -> None:
    step, _ = _undo_on_top(b)
    outcome = b.state.outcome or ROLLED_BACK
    b.emit(ev.CompensationSettled(c.actor, c.reason, step.id, outcome))


def _rearm_timer(b: Builder, c: cmd.RearmTimer) -> None:
    if b.state.terminal:
        raise CommandRejected(
            errors.WORKFLOW_FINISHED, f"the workflow has finished ({b.state.status})"
        )
    if all(t.key != c.key for t in b.state.timers):
        raise CommandRejected(NOT_ALLOWED, NO_SUCH_TIMER.format(key=c.key))
    b.emit(ev.TimerRearmed(c.actor, c.reason, c.key))


def _add_approver(b: Builder, c: cmd.AddApprover) -> None:
    s = b.state
    if s.terminal:
        raise CommandRejected(errors.WORKFLOW_FINISHED, f"the workflow has finished ({s.status})")
    if s.status != RUNNING:
        raise CommandRejected(NOT_ALLOWED, NOT_RUNNING.format(status=s.status.lower()))
    if s.step == SUBMITTER_STEP:
        raise CommandRejected(NOT_ALLOWED, WAITS_FOR_SUBMITTER)
    title = b.definition.step_title
    if s.step is None:
        raise CommandRejected(NOT_ALLOWED, NOT_WAITING)
    if c.step != s.step:
        raise CommandRejected(
            NOT_ALLOWED, NOT_AT_STEP.format(step=title(c.step), current=title(s.step))
        )
    step = b.definition.step(s.step)
    if not isinstance(step, ApprovalStep) or not s.assignments:
        raise CommandRejected(NOT_ALLOWED, NOT_AN_APPROVAL.format(step=title(s.step)))
    step.add_approver(b, c.user, c.actor, c.reason)
