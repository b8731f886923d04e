"""Workflows as people and auditors see them."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError

from templates_engine.snapshot import state_from_dict

from .. import access
from ..models import User, Workflow, WorkflowEvent


def workflow_get(*, user: User, workflow_id: uuid.UUID | str) -> Workflow | None:
    """The workflow if ``user`` may read it (approvals.access); None otherwise, also
    for another organisation's workflow."""
    try:
        wf = Workflow.objects.select_related("template", "submitter").get(
            tenant_id=user.member_tenant_id, pk=workflow_id
        )
    except (Workflow.DoesNotExist, ValueError, TypeError, DjangoValidationError):
        return None
    return wf if access.may_read_workflow(user, wf) else None


@dataclass(frozen=True)
class HistoryEntry:
    seq: int
    type: str
    actor: str | None
    role: str
    on_behalf_of: str | None
    at: dt.datetime
    comment: str
    payload: dict[str, Any]


def workflow_history(*, workflow: Workflow) -> list[HistoryEntry]:
    rows = (
        WorkflowEvent.objects.filter(workflow_id=workflow.pk)
        .order_by("seq")
        .values_list(
            "seq",
            "type",
            "actor__username",
            "role",
            "on_behalf_of__username",
            "created_at",
            "payload",
        )
    )
    return [
        HistoryEntry(seq, type_, actor, role, behalf, at, payload.get("comment", ""), payload)
        for seq, type_, actor, role, behalf, at, payload in rows
    ]


def workflow_assignees(*, workflow: Workflow) -> list[dict[str, str | None]]:
    state = state_from_dict(workflow.snapshot) if workflow.snapshot else None
    if state is None:
        return []
    return (
        [{"user": a.user, "onBehalfOf": a.on_behalf_of} for a in state.outstanding()]
        if state.step and state.status == "RUNNING"
        else []
    )


def workflows_submitted(*, user: User, limit: int = 100) -> list[Workflow]:
    """The workflows ``user`` submitted, newest first. (Searching is
    approvals.web.search, for the page and the API alike.)"""
    return list(
        Workflow.objects.filter(tenant_id=user.member_tenant_id, submitter=user)
        .select_related("submitter", "template")
        .order_by("-created_at", "pk")[:limit]
    )
