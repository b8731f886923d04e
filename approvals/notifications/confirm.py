"""Confirming a one-click link: the decision and the link's ``LinkUse`` row in one
transaction, through the command path, as the link's person."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from approvals import clock
from approvals.runtime.commands import CommandResult
from approvals.services.workflows import workflow_decide

from .links import USED, LinkRefused, LinkTarget, link_check
from .models import LinkUse


def link_confirm(
    *, token: str, comment: str, viewer: Any = None
) -> tuple[LinkTarget, CommandResult]:
    """Record the link's decision as its person, once. Returns the target and the
    CommandResult; raises LinkRefused (nothing recorded) or the command path's errors
    (CommandRejected, ...), which roll the LinkUse row back with the rest."""
    target = link_check(token=token, viewer=viewer)
    link = target.link
    try:
        with transaction.atomic():
            # First, so a second confirmation waits here for the first to commit and
            # then finds the link used.
            LinkUse.objects.create(
                link_id=link.link_id,
                tenant_id=target.user.member_tenant_id,
                workflow_id=target.workflow.pk,
                user=target.user,
                decision=link.decision,
                used_at=clock.now(),
            )
            result: CommandResult = workflow_decide(
                user=target.user,
                workflow_id=target.workflow.pk,
                decision=link.decision,
                request_id=link.request_id,
                comment=comment,
            )
    except IntegrityError as exc:
        used = (
            LinkUse.objects.select_related("user", "workflow").filter(link_id=link.link_id).first()
        )
        if used is None:
            raise
        raise LinkRefused(USED, used) from exc
    return target, result
