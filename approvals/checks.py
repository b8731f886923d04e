"""System checks: every published version of every workflow template still validates,
and what it names (groups, users, activities, data fields) still resolves in its
organisation: a group deleted after publishing is reported here, before a workflow
started on that version stalls with no approvers."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import DatabaseError

from templates_engine import Definition, DefinitionError


@checks.register(checks.Tags.database)
def check_workflow_templates(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from .models import WorkflowTemplate
    from .selectors.templates import workflow_template_problems

    messages: list[checks.CheckMessage] = []
    try:
        templates = list(
            WorkflowTemplate.objects.order_by("tenant_id", "key", "version").values_list(
                "pk", "tenant_id", "key", "version", "definition"
            )
        )
    except DatabaseError:
        return messages  # not migrated yet
    for pk, tenant_id, key, version, doc in templates:
        try:
            Definition.parse(doc, version=version)
        except DefinitionError as exc:
            messages.append(
                checks.Error(
                    f"workflow template {key} v{version}: {exc}",
                    obj=f"WorkflowTemplate {pk}",
                    id="approvals.E001",
                )
            )
            continue
        for problem in workflow_template_problems(tenant_id=tenant_id, doc=doc):
            messages.append(
                checks.Error(
                    f"workflow template {key} v{version}: {problem}",
                    hint="Publish a version that names what exists, or restore what it names.",
                    obj=f"WorkflowTemplate {pk}",
                    id="approvals.E002",
                )
            )
    return messages
