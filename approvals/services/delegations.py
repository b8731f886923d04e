"""Out-of-office delegations: while one is active, tasks that would go to ``user`` go
to ``delegate``. Setting one is refused when the delegate could not hold the tasks."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, field

from django.utils import timezone

from templates_engine import CommandRejected

from .. import access, clock
from ..models import Delegation, PendingTask, User, time_bounds
from ..runtime.commands import Busy, WorkflowNotFound
from ..runtime.tenant_scope import atomic_for_tenant_of
from .workflows import workflow_decide

DELEGATE_OTHER_TENANT = "The delegate must belong to the same organisation."
DELEGATE_SELF = "A person cannot delegate to themselves."
DELEGATE_INACTIVE = "The delegate's account is deactivated."
DELEGATE_SUBMITTER = (
    "{delegate} submitted a request that waits for {user} ({subject}); the submitter of a "
    "request may not decide it, so {delegate} cannot stand in for {user}."
)


class DelegationRefused(ValueError):
    pass


def delegation_check(*, user: User, delegate: User, maker: User | None = None) -> None:
    """Raise DelegationRefused with a clear message when ``delegate`` may not stand in
    for ``user``: another organisation, themselves, someone who cannot be given tasks
    (a deactivated account, an auditor, an integration account: access), or the
    submitter of a workflow whose task ``user`` holds now (segregation of duties; the
    engine also keeps future tasks of the delegate's own workflows with ``user``).
    ``maker``, who sets it when that is not ``user`` (an admin), may not name
    themselves (``access.may_delegate_for``)."""
    if maker is not None and not access.may_delegate_for(maker, user, delegate):
        raise DelegationRefused(access.FORBIDDEN_DELEGATE_TO_ONESELF)
    if user.tenant_id != delegate.tenant_id:
        raise DelegationRefused(DELEGATE_OTHER_TENANT)
    if user.pk == delegate.pk:
        raise DelegationRefused(DELEGATE_SELF)
    if not delegate.is_active:
        raise DelegationRefused(DELEGATE_INACTIVE)
    cannot = access.task_holder_refusal(delegate)  # auditors, integration accounts
    if cannot is not None:
        raise DelegationRefused(cannot)
    own = (
        PendingTask.objects.filter(
            tenant_id=user.member_tenant_id, assignee=user, workflow__submitter=delegate
        )
        .select_related("workflow")
        .first()
    )
    if own is not None:
        wf = own.workflow
        raise DelegationRefused(
            DELEGATE_SUBMITTER.format(
                delegate=delegate.username,
                user=user.username,
                subject=f"{wf.subject_type} {wf.subject_id}",
            )
        )


DELEGATION_PERIOD = "The last day must not be before the first."


@atomic_for_tenant_of("user")
def delegation_set(
    *,
    user: User,
    delegate: User,
    starts_at: dt.datetime,
    ends_at: dt.datetime,
    reason: str = "",
    made_by: User | None = None,
) -> Delegation:
    """Out of office: from ``starts_at`` until ``ends_at`` tasks for ``user`` go to
    ``delegate``, recorded as made by ``made_by`` (an admin setting it up for them;
    by default the person). Raises DelegationRefused as ``delegation_check`` does, for
    an empty period, or for times outside 1970..2200."""
    made_by = made_by or user
    delegation_check(user=user, delegate=delegate, maker=made_by)
    assert user.tenant_id is not None
    if not (time_bounds.stored_in_range(starts_at) and time_bounds.stored_in_range(ends_at)):
        raise DelegationRefused(time_bounds.MOMENT_OUT_OF_RANGE)
    if ends_at <= starts_at:
        raise DelegationRefused(DELEGATION_PERIOD)
    return Delegation.objects.create(
        tenant_id=user.tenant_id,
        user=user,
        delegate=delegate,
        starts_at=starts_at,
        ends_at=ends_at,
        reason=reason[:200],
        created_by=made_by,
    )


DELEGATION_NOT_CURRENT = (
    "This absence has not begun or has already ended, so it cannot be ended now."
)
DELEGATION_STARTED = "This absence has already begun: end it now instead of deleting it."
DELEGATION_ENDED = "This absence has already ended and can no longer be changed."


class DelegationNotFound(LookupError):
    """No delegation of that id is the person's own (another person's reads the same)."""


def _own(user: User, delegation_id: int) -> Delegation:
    found = (
        Delegation.objects.select_for_update()
        .filter(pk=delegation_id, tenant_id=user.member_tenant_id, user_id=user.pk)
        .first()
    )
    if found is None:
        raise DelegationNotFound(delegation_id)
    return found


@atomic_for_tenant_of("user")
def delegation_end(*, user: User, delegation_id: int) -> Delegation:
    """End the person's current absence now: from this moment their tasks come to them
    again, and the stand-in may no longer decide on their behalf (the directory's
    version moves with the row: the database's trigger, migration 0013)."""
    d = _own(user, delegation_id)
    now = clock.now()
    if not d.starts_at <= now < d.ends_at:
        raise DelegationRefused(DELEGATION_NOT_CURRENT)
    d.ends_at = max(now, d.starts_at + dt.timedelta(microseconds=1))
    d.save(update_fields=["ends_at"])
    return d


@atomic_for_tenant_of("user")
def delegation_change(
    *,
    user: User,
    delegation_id: int,
    delegate: User,
    starts_at: dt.datetime,
    ends_at: dt.datetime,
    reason: str | None = None,
) -> Delegation:
    """Change an absence that has not ended (its days or its stand-in), with the checks
    of ``delegation_set``."""
    d = _own(user, delegation_id)
    if d.ends_at <= clock.now():
        raise DelegationRefused(DELEGATION_ENDED)
    delegation_check(user=user, delegate=delegate)
    if not (time_bounds.stored_in_range(starts_at) and time_bounds.stored_in_range(ends_at)):
        raise DelegationRefused(time_bounds.MOMENT_OUT_OF_RANGE)
    if ends_at <= starts_at:
        raise DelegationRefused(DELEGATION_PERIOD)
    d.delegate = delegate
    d.starts_at = starts_at
    d.ends_at = ends_at
    fields = ["delegate", "starts_at", "ends_at"]
    if reason is not None:
        d.reason = reason[:200]
        fields.append("reason")
    d.save(update_fields=fields)
    return d


@atomic_for_tenant_of("user")
def delegation_delete(*, user: User, delegation_id: int) -> None:
    """Delete a planned absence, one that has not begun."""
    d = _own(user, delegation_id)
    if d.starts_at <= clock.now():
        raise DelegationRefused(DELEGATION_STARTED)
    d.delete()


# -- "also hand over what I hold now" ------------------------------------------------------

HANDOVER_NOTE = "Out of office until {last}"


@dataclass(frozen=True)
class HandOver:
    """What handing over the tasks one holds did: the workflows handed to the stand-in,
    and those that stay with the person, each with why in a sentence."""

    handed: list[uuid.UUID] = field(default_factory=list)
    kept: list[tuple[uuid.UUID, str]] = field(default_factory=list)


def _request_id(d: Delegation, task: PendingTask) -> str:
    # One per absence, request and step: doing it again records nothing more.
    return f"#away:{d.pk}:{task.workflow_id}:{task.step}"


def delegation_hand_over(*, user: User, delegation_id: int) -> HandOver:
    """Hand every task ``user`` holds now (not their own requests sent back to them) to
    the stand-in of their absence ``delegation_id``: for each, a delegation through
    the command path, by ``user``, so the stand-in holds it on their behalf and decides
    it "for" them. Exactly once per absence and task (the request id says so). The
    tasks stay with the stand-in when the absence ends: the person takes back what
    they want by asking, and the stand-in hands it back with the task's own "Hand to a
    colleague". Raises DelegationNotFound for another person's absence and
    DelegationRefused for an ended one or a stand-in who can no longer act."""
    d = (
        Delegation.objects.filter(
            pk=delegation_id, tenant_id=user.member_tenant_id, user_id=user.pk
        )
        .select_related("delegate")
        .first()
    )
    if d is None:
        raise DelegationNotFound(delegation_id)
    if d.ends_at <= clock.now():
        raise DelegationRefused(DELEGATION_ENDED)
    delegation_check(user=user, delegate=d.delegate)
    last = timezone.localtime(d.ends_at - dt.timedelta(seconds=1))
    note = d.reason or HANDOVER_NOTE.format(last=f"{last.day} {last:%b %Y}")
    held = (
        PendingTask.objects.filter(tenant_id=user.member_tenant_id, assignee_id=user.pk)
        .exclude(workflow__submitter_id=user.pk)
        .order_by("due_at", "id")
    )
    done = HandOver()
    for task in held:
        try:
            workflow_decide(
                user=user,
                workflow_id=task.workflow_id,
                decision="delegate",
                request_id=_request_id(d, task),
                comment=note,
                delegate_to=d.delegate.username,
            )
        except CommandRejected as exc:
            done.kept.append((task.workflow_id, exc.message))
        except (WorkflowNotFound, Busy, access.Forbidden) as exc:
            done.kept.append((task.workflow_id, str(exc)))
        else:
            done.handed.append(task.workflow_id)
    return done
