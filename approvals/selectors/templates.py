"""Reads of workflow templates: the newest published version (the one new workflows
start on), and whether a definition's references resolve in a tenant."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import Count, Q, QuerySet

from templates_engine import TERMINAL, Definition, DefinitionError
from templates_engine.references import (
    ACTIVITY,
    ENGINE_FIELDS,
    FIELD,
    GROUP,
    USER,
    references,
    schema_fields,
)

from ..activities import get_activity
from ..models import OrgGroup, User, WorkflowTemplate

UNKNOWN_GROUP = "there is no group {name!r} in this organisation"
UNKNOWN_USER = "there is no active user {name!r} in this organisation"
UNKNOWN_ACTIVITY = "there is no activity {name!r} (register it with @activity)"
UNKNOWN_FIELD = (
    "the condition reads data.{name}, which the data schema does not declare (it declares {known})"
)


def _newest_first(tenant_id: int) -> QuerySet[WorkflowTemplate]:
    return WorkflowTemplate.objects.filter(tenant_id=tenant_id).order_by("key", "-version")


def workflow_template_latest(*, tenant_id: int, key: str) -> WorkflowTemplate | None:
    """The newest version of the workflow template ``key``, or None."""
    return _newest_first(tenant_id).filter(key=key).first()


def workflow_templates_latest(*, tenant_id: int) -> list[WorkflowTemplate]:
    """The newest version of each of the tenant's workflow templates that takes new
    workflows (not retired), by key."""
    latest: dict[str, WorkflowTemplate] = {}
    for template in _newest_first(tenant_id):
        latest.setdefault(template.key, template)
    return [t for t in latest.values() if t.retired_at is None]


def workflow_template_versions(*, tenant_id: int, key: str) -> list[WorkflowTemplate]:
    """Every version of ``key``, newest first, each with ``running`` (workflows on it
    not yet finished) and ``started`` (all workflows ever started on it)."""
    running = Count("workflow", filter=~Q(workflow__status__in=TERMINAL))
    return list(
        _newest_first(tenant_id)
        .filter(key=key)
        .select_related("published_by", "retired_by")
        .annotate(running=running, started=Count("workflow"))
    )


def workflow_template_problems(*, tenant_id: int, doc: Mapping[str, Any]) -> list[DefinitionError]:
    """Every way ``doc`` does not fit this tenant, each at its JSON path: its shape
    (``Definition.parse``: only the first problem, since nothing after it can be read),
    else each group, user or activity it names that does not exist and each data field
    a condition reads that the schema does not declare. Empty when it may be published.
    Active users only: a step naming someone who has left would find no approver."""
    try:
        Definition.parse(doc)
    except DefinitionError as exc:
        return [exc]
    refs = list(references(doc))
    groups = set(
        OrgGroup.objects.filter(
            tenant_id=tenant_id, key__in=[r.name for r in refs if r.kind == GROUP]
        ).values_list("key", flat=True)
    )
    users = set(
        User.objects.filter(
            tenant_id=tenant_id,
            is_active=True,
            username__in=[r.name for r in refs if r.kind == USER],
        ).values_list("username", flat=True)
    )
    declared = schema_fields(doc)
    problems: list[DefinitionError] = []
    for ref in refs:
        if ref.kind == GROUP and ref.name not in groups:
            problems.append(DefinitionError(ref.path, UNKNOWN_GROUP.format(name=ref.name)))
        elif ref.kind == USER and ref.name not in users:
            problems.append(DefinitionError(ref.path, UNKNOWN_USER.format(name=ref.name)))
        elif ref.kind == ACTIVITY and get_activity(ref.name) is None:
            problems.append(DefinitionError(ref.path, UNKNOWN_ACTIVITY.format(name=ref.name)))
        elif ref.kind == FIELD and declared is not None and ref.name not in declared:
            known = ", ".join(sorted(declared - ENGINE_FIELDS)) or "none"
            problems.append(
                DefinitionError(ref.path, UNKNOWN_FIELD.format(name=ref.name, known=known))
            )
    return problems
