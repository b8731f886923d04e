"""Out-of-office delegations: while one is active, tasks that would go to ``user`` go
to ``delegate``. Setting one is refused when the delegate could not hold the tasks."""

from __future__ import annotations

import datetime as dt

from .. import access
from ..models import Delegation, PendingTask, User, time_bounds

DELEGATE_OTHER_TENANT = "The delegate must belong to the same organisation."
DELEGATE_SELF = "A person cannot delegate to themselves."
DELEGATE_INACTIVE = "The delegate's account is deactivated."
DELEGATE_SUBMITTER = (
    "{delegate} submitted a request that waits for {user} ({subject}); the submitter of a "
    "request may not decide it, so {delegate} cannot stand in for {user}."
)


class DelegationRefused(ValueError):
    pass


def delegation_check(*, user: User, delegate: User) -> None:
    """Raise DelegationRefused with a clear message when ``delegate`` may not stand in
    for ``user``: another organisation, themselves, someone who cannot be given tasks
    (a deactivated account, an auditor, an integration account: access), or the
    submitter of a workflow whose task ``user`` holds now (segregation of duties; the
    engine also keeps future tasks of the delegate's own workflows with ``user``)."""
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
        PendingTask.objects.filter(assignee=user, workflow__submitter=delegate)
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


def delegation_set(
    *, user: User, delegate: User, starts_at: dt.datetime, ends_at: dt.datetime, reason: str = ""
) -> Delegation:
    """Out of office: from ``starts_at`` until ``ends_at`` tasks for ``user`` go to
    ``delegate``. Raises DelegationRefused as ``delegation_check`` does, for an empty
    period, or for times outside 1970..2200."""
    delegation_check(user=user, delegate=delegate)
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
    )
