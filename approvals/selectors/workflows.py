"""Workflows as people and auditors see them."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q

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


def workflow_search(
    *,
    user: User,
    status: str | None = None,
    template: str | None = None,
    subject_type: str | None = None,
    subject_id: str | None = None,
    assignee: str | None = None,
    submitter: str | None = None,
    created_after: dt.datetime | None = None,
    created_before: dt.datetime | None = None,
    text: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Workflow]:
    qs = access.workflows_readable(user)
    if status:
        qs = qs.filter(Q(public_status=status) | Q(status=status))
    exact = {
        "template_key": template,
        "subject_type": subject_type,
        "subject_id": subject_id,
        "tasks__assignee__username": assignee,
        "submitter__username": submitter,
        "created_at__gte": created_after,
        "created_at__lt": created_before,
    }
    qs = qs.filter(**{lookup: value for lookup, value in exact.items() if value})
    if text:
        qs = qs.filter(Q(subject_id__icontains=text) | Q(template_key__icontains=text))
    return list(
        qs.select_related("submitter", "template").order_by("-created_at", "pk")[
            offset : offset + limit
        ]
    )
