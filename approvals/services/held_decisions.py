"""Decisions held by the server for their undo window (approvals.models.held).

A page (or an API client that asks for it) sends its decision at once; ``decision_hold``
tries it through the command path and rolls the try back, so every refusal the
decision would meet is said now and nothing is kept, then keeps the decision for
``APPROVALS_UNDO_SECONDS``. ``decision_undo`` inside the window cancels it, and nothing
is recorded. Once the window has passed, ``held_release_due`` (a periodic job, beside
the timer poller) records it through ``workflow_decide`` with the request id it was sent
with, and marks the row in the same transaction: a poller killed half way leaves it due,
and the request id makes a second delivery a duplicate, so it is recorded exactly once.
A decision the command path refuses at release (the task was handed to someone else or
the request withdrawn meanwhile) is marked refused, and its person gets a mail saying it
was not recorded and why. The same job prunes the rows closed (recorded, undone or
refused) more than ``APPROVALS_HELD_KEEP_DAYS`` ago: the history keeps what was decided.

Both the hold and its undo lock the workflow's row or the held row, so two holders of a
task racing hold one decision, and an undo racing its release either cancels it or
finds it recorded."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import uuid
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models import QuerySet

from templates_engine import CommandRejected

from .. import access, clock
from ..models import HeldDecision, User, Workflow
from ..models.held import OPEN_HELD
from ..notifications.messages import held_not_recorded_mail
from ..runtime.commands import (
    REQUEST_ID_REUSED,
    WORKFLOW_NOT_FOUND,
    CommandResult,
    RequestIdReused,
    WorkflowNotFound,
)
from ..runtime.tenant_scope import acting_for
from ..selectors.held import held_open
from ..words.held import deciding_words
from .workflows import workflow_decide

log = logging.getLogger(__name__)

HOLDABLE = ("approve", "reject", "send_back")

NOT_HOLDABLE = "NOT_HOLDABLE"
NOT_HOLDABLE_TEXT = (
    "Only an approval, a rejection or a send-back is held for an undo; "
    "hand a task on without holding it. Nothing was recorded."
)
BEING_DECIDED = "BEING_DECIDED"
ALREADY_RECORDED = "ALREADY_RECORDED"
ALREADY_RECORDED_TEXT = "This decision had already been recorded; nothing was held."
UNDONE = "UNDONE"
UNDONE_TEXT = "This decision was undone; send it again with a new request id."
NOTHING_HELD = "NOTHING_HELD"
NOTHING_HELD_TEXT = "Nothing of yours is waiting to be recorded under that request id."
TOO_LATE = "TOO_LATE_TO_UNDO"
TOO_LATE_RECORDED = "Too late to undo: this decision has already been recorded."
TOO_LATE_WINDOW = "Too late to undo: the seconds to undo it have passed, and it is being recorded."
NOT_RECORDED = "NOT_RECORDED"
NOT_RECORDED_TEXT = "This decision was not recorded: {reason}"

# A release that failed for another reason than a refusal is tried again this much
# later for each failure so far.
RETRY_SECONDS = 5
# Closed held rows pruned by one statement at most (the job goes on while there are).
PRUNE_BATCH = 1000


class HoldRefused(Exception):
    """A hold or an undo that changed nothing; ``code`` for programs, ``message`` for
    people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _TrialOver(Exception):
    def __init__(self, result: CommandResult) -> None:
        super().__init__("trial")
        self.result = result


def undo_seconds() -> int:
    return int(settings.APPROVALS_UNDO_SECONDS)


def held_state(hold: HeldDecision) -> str:
    """held | recorded | undone | refused"""
    if hold.recorded_at is not None:
        return "recorded"
    if hold.undone_at is not None:
        return "undone"
    return "refused" if hold.refused else "held"


def _workflow_pk(workflow_id: uuid.UUID | str) -> uuid.UUID:
    try:
        return workflow_id if isinstance(workflow_id, uuid.UUID) else uuid.UUID(str(workflow_id))
    except ValueError as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc


def _trial(**decision: Any) -> CommandResult:
    """The decision through the command path, rolled back: what it would meet now."""
    try:
        with transaction.atomic():
            raise _TrialOver(workflow_decide(**decision))
    except _TrialOver as over:
        return over.result


def _first_name(user: User) -> str:
    return user.first_name or user.username


def decision_hold(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    decision: str,
    request_id: str,
    comment: str = "",
    on_behalf_of: str | None = None,
) -> HeldDecision:
    """Hold ``user``'s decision for the undo window. Raises what ``workflow_decide``
    raises for a decision that would be refused now, and HoldRefused when another
    holder's decision is held on the workflow, or the request id was recorded
    already. A repeat of the same request (a retry after a lost answer) returns the
    row held the first time."""
    if decision not in HOLDABLE:
        raise HoldRefused(NOT_HOLDABLE, NOT_HOLDABLE_TEXT)
    wid = _workflow_pk(workflow_id)
    with transaction.atomic(), acting_for(user.member_tenant_id):
        wf = Workflow.objects.select_for_update(of=("self",)).filter(pk=wid).first()
        if wf is None:
            raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
        same = HeldDecision.objects.filter(workflow=wf, request_id=request_id).first()
        if same is not None:
            if same.actor_id != user.pk or same.decision != decision:
                raise RequestIdReused(REQUEST_ID_REUSED)
            if same.undone_at is not None:
                raise HoldRefused(UNDONE, UNDONE_TEXT)
            return same
        args = {"comment": comment, "on_behalf_of": on_behalf_of}
        tried = _trial(user=user, workflow_id=wid, decision=decision, request_id=request_id, **args)
        if tried.duplicate:
            raise HoldRefused(ALREADY_RECORDED, ALREADY_RECORDED_TEXT)
        other = _open(HeldDecision.objects.filter(workflow=wf)).select_related("actor").first()
        if other is not None:
            words = deciding_words(_first_name(other.actor), other.decision)
            raise HoldRefused(BEING_DECIDED, f"{words} Nothing was recorded for you.")
        now = clock.now()
        return HeldDecision.objects.create(
            tenant_id=wf.tenant_id,
            workflow=wf,
            actor=user,
            step=wf.current_step or "",
            decision=decision,
            comment=comment,
            on_behalf_of=on_behalf_of or "",
            request_id=request_id,
            held_at=now,
            release_at=now + dt.timedelta(seconds=undo_seconds()),
        )


def held_by_another_refuse(user: User, workflow_id: Any) -> None:
    """A decision recorded at once where another holder's decision is held is refused
    (HoldRefused BEING_DECIDED): the task is being decided."""
    wid = str(_workflow_pk(workflow_id))
    hold = held_open(tenant_id=user.member_tenant_id, workflow_ids=[wid]).get(wid)
    if hold is not None and hold.actor_id != user.pk:
        words = deciding_words(_first_name(hold.actor), hold.decision)
        raise HoldRefused(BEING_DECIDED, f"{words} Nothing was recorded for you.")


def decision_undo(*, user: User, workflow_id: uuid.UUID | str, request_id: str) -> HeldDecision:
    """Cancel ``user``'s held decision inside its window: nothing is recorded. An undo
    repeated returns the row; one too late (recorded, or the window passed) or of
    nothing held raises HoldRefused and changes nothing."""
    wid = _workflow_pk(workflow_id)
    with transaction.atomic(), acting_for(user.member_tenant_id):
        hold = (
            HeldDecision.objects.select_for_update()
            .filter(workflow_id=wid, request_id=request_id, actor=user)
            .first()
        )
        if hold is None:
            raise HoldRefused(NOTHING_HELD, NOTHING_HELD_TEXT)
        state = held_state(hold)
        if state == "recorded":
            raise HoldRefused(TOO_LATE, TOO_LATE_RECORDED)
        if state == "refused":
            raise HoldRefused(NOT_RECORDED, NOT_RECORDED_TEXT.format(reason=hold.refused))
        if state == "held":
            now = clock.now()
            if now >= hold.release_at:
                raise HoldRefused(TOO_LATE, TOO_LATE_WINDOW)
            hold.undone_at = now
            hold.save(update_fields=["undone_at"])
        return hold


def _open(rows: QuerySet[HeldDecision]) -> QuerySet[HeldDecision]:
    return rows.filter(OPEN_HELD)


def held_release_due(*, limit: int = 500) -> int:
    """Record the held decisions whose window has passed, each in its own
    transaction, then prune the closed rows past keeping; returns how many were
    released (recorded or refused)."""
    released = 0
    while released < limit and held_release_next():
        released += 1
    held_prune(now=clock.now())
    return released


def held_keep_days() -> int:
    return int(settings.APPROVALS_HELD_KEEP_DAYS)


def held_prune(*, now: dt.datetime, limit: int = 10 * PRUNE_BATCH) -> int:
    """Delete the held rows closed before ``now`` less ``APPROVALS_HELD_KEEP_DAYS``:
    recorded, undone, or refused at release (``release_at``: when it was refused). An
    open row is never pruned. Returns how many went."""
    cutoff = now - dt.timedelta(days=held_keep_days())
    closed = (
        models.Q(recorded_at__lt=cutoff)
        | models.Q(undone_at__lt=cutoff)
        | (~models.Q(refused="") & models.Q(release_at__lt=cutoff))
    )
    pruned = 0
    while pruned < limit:
        ids = list(HeldDecision.objects.filter(closed).values_list("pk", flat=True)[:PRUNE_BATCH])
        if not ids:
            break
        deleted, _ = HeldDecision.objects.filter(pk__in=ids).filter(closed).delete()
        pruned += deleted
    return pruned


def held_release_next(
    *, tenant_id: int | None = None, workflow_id: Any = None, request_id: str = ""
) -> bool:
    """Release the earliest held decision due (or the one named), if another process
    is not releasing it; False when there was none."""
    now = clock.now()
    scope = acting_for(tenant_id) if tenant_id is not None else contextlib.nullcontext()
    with transaction.atomic(), scope:
        due = _open(HeldDecision.objects.filter(release_at__lte=now))
        if workflow_id is not None:
            due = due.filter(workflow_id=workflow_id, request_id=request_id)
        hold = (
            due.select_for_update(skip_locked=True, of=("self",))
            .select_related("actor")
            .order_by("release_at")
            .first()
        )
        if hold is not None:
            _record(hold, now)
    return hold is not None


def _record(hold: HeldDecision, now: dt.datetime) -> None:
    """The decision through the one command path, and the row marked with it."""
    try:
        with transaction.atomic():
            workflow_decide(
                user=hold.actor,
                workflow_id=hold.workflow_id,
                decision=hold.decision,
                request_id=hold.request_id,
                comment=hold.comment,
                on_behalf_of=hold.on_behalf_of or None,
            )
    except (CommandRejected, WorkflowNotFound, access.Forbidden, RequestIdReused) as exc:
        hold.refused = str(getattr(exc, "message", "") or exc)[:2000] or "it was refused."
        fields = ["refused"]
        held_not_recorded_mail(hold=hold, reason=hold.refused, now=now)
    except Exception:
        log.exception("held decision %s of workflow %s failed", hold.pk, hold.workflow_id)
        hold.failures += 1
        hold.release_at = now + dt.timedelta(seconds=RETRY_SECONDS * hold.failures)
        fields = ["failures", "release_at"]
    else:
        hold.recorded_at = now
        fields = ["recorded_at"]
    hold.save(update_fields=fields)
