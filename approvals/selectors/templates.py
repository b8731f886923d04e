"""Reads of workflow templates: the newest published version, the one new workflows
start on."""

from __future__ import annotations

from django.db.models import QuerySet

from ..models import WorkflowTemplate


def _newest_first(tenant_id: int) -> QuerySet[WorkflowTemplate]:
    return WorkflowTemplate.objects.filter(tenant_id=tenant_id).order_by("key", "-version")


def workflow_template_latest(*, tenant_id: int, key: str) -> WorkflowTemplate | None:
    """The newest version of the workflow template ``key``, or None."""
    return _newest_first(tenant_id).filter(key=key).first()


def workflow_templates_latest(*, tenant_id: int) -> list[WorkflowTemplate]:
    """The newest version of each of the tenant's workflow templates, by key."""
    latest: dict[str, WorkflowTemplate] = {}
    for template in _newest_first(tenant_id):
        latest.setdefault(template.key, template)
    return list(latest.values())
