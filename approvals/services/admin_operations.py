"""What an organisation admin does to a workflow that needs a person, each through the
one command path with who and why: start a rolled-back request again as a new one,
retry or settle by hand an undo that failed, re-arm a parked timer, add an approver to
a step nobody can finish. (Cancelling and
reassigning are ``services.workflows``' ``workflow_cancel`` and ``workflow_reassign``.)

A finished workflow stays finished (templates_engine.admin_operations): a restart is a new
workflow linked both ways, and a retried or settled undo keeps COMPENSATION_FAILED."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError

from templates_engine import commands as cmd

from .. import access
from ..models import Timer, User, Workflow
from ..runtime import tenant_scope
from ..runtime.commands import WORKFLOW_NOT_FOUND, Actor, CommandResult, WorkflowNotFound
from ..runtime.commands import command_execute as _execute
from .workflows import StartResult, workflow_start

REASON_REQUIRED = "Say why: the reason is kept in the workflow's history."
# What the engine adds to a workflow's data as it runs; a restart starts without them.
_ENGINE_DATA = ("results", "signals")
TIMER_NOT_FOUND = "No such timer."
FORBIDDEN_ADD_APPROVER = "Only an organisation admin may add an approver to a request."


class ReasonRequired(ValueError):
    pass


def _operable(
    user: User,
    workflow_id: uuid.UUID | str,
    reason: str,
    forbidden: str = access.FORBIDDEN_OPERATE,
) -> Workflow:
    if not reason.strip():
        raise ReasonRequired(REASON_REQUIRED)
    try:
        wf = access.workflow_readable(user, workflow_id)
    except (ValueError, TypeError, DjangoValidationError) as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc
    if wf is None:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    if not access.may_operate(user, wf):
        raise access.Forbidden(forbidden)
    return wf


def _run(user: User, wf: Workflow, command: cmd.Command, request_id: str) -> CommandResult:
    return _execute(
        tenant_id=wf.tenant_id,
        workflow_id=wf.pk,
        command=command,
        actor=Actor(user, "admin"),
        request_id=request_id,
    )


def workflow_restart(
    *, user: User, workflow_id: uuid.UUID | str, reason: str, request_id: str
) -> StartResult:
    """Start a workflow rolled back after a step failed for good again, as a new
    workflow: its submitter, subject and data, on the newest published version of its
    workflow template. The new history records where it came from and who restarted
    it (``origin.restarted_from``); the old one records ``WorkflowRestarted`` and stays
    rolled back. Both happen in one transaction, or neither (the engine refuses a
    workflow that is not rolled back after a failed step, or was restarted already)."""
    wf = _operable(user, workflow_id, reason)
    submitter = wf.submitter
    if submitter is None:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    data = {k: v for k, v in (wf.data or {}).items() if k not in _ENGINE_DATA}
    origin: dict[str, Any] = {
        "restarted_from": str(wf.pk),
        "made_by": user.username,
        "reason": reason,
    }
    with tenant_scope.atomic_for(wf.tenant_id):
        started = workflow_start(
            submitter=submitter,
            template_key=wf.template_key,
            subject_type=wf.subject_type,
            subject_id=wf.subject_id,
            data=data,
            origin=origin,
            # the same form sent twice restarts once: the repeat finds this start, and
            # the old workflow's event is then a duplicate of the same command
            idempotency_key=f"#restart:{wf.pk}:{request_id}",
        )
        _run(user, wf, cmd.RetryStep(user.username, reason, str(started.workflow_id)), request_id)
    return started


def workflow_retry_compensation(
    *, user: User, workflow_id: uuid.UUID | str, reason: str, request_id: str
) -> CommandResult:
    """One more attempt of the undo that failed (COMPENSATION_FAILED)."""
    wf = _operable(user, workflow_id, reason)
    return _run(user, wf, cmd.RetryCompensation(user.username, reason), request_id)


def workflow_resolve_by_hand(
    *, user: User, workflow_id: uuid.UUID | str, reason: str, request_id: str
) -> CommandResult:
    """The failed undo was done by hand: the workflow ends as the roll-back would."""
    wf = _operable(user, workflow_id, reason)
    return _run(user, wf, cmd.ResolveByHand(user.username, reason), request_id)


def workflow_add_approver(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    person: str,
    step: str,
    reason: str,
    request_id: str,
) -> CommandResult:
    """Add ``person`` as an approver of ``step``, the approval step the running workflow
    waits in: the way out when nobody can finish it. Never the admin herself, nor
    someone who cannot hold tasks (access); the engine refuses the rest (another
    step, someone outside the organisation or already holding a task there, the
    submitter), each with nothing changed."""
    wf = _operable(user, workflow_id, reason, FORBIDDEN_ADD_APPROVER)
    if person == user.username:
        raise access.Forbidden(access.FORBIDDEN_ADD_SELF)
    access.check_may_hold_tasks_named(wf.tenant_id, person)
    return _run(user, wf, cmd.AddApprover(user.username, person, step, reason), request_id)


def timer_rearm(*, user: User, timer_id: int, reason: str, request_id: str) -> CommandResult:
    """Deliver a parked timer again now; the event says who and why."""
    timers = Timer.objects.filter(pk=timer_id)
    if not user.is_superuser:
        timers = timers.filter(tenant_id=user.member_tenant_id)
    timer = timers.first()
    if timer is None:
        raise WorkflowNotFound(TIMER_NOT_FOUND)
    wf = _operable(user, timer.workflow_id, reason)
    return _run(user, wf, cmd.RearmTimer(user.username, timer.key, reason), request_id)
