"""System checks: every published workflow template validates, and every activity it
names is registered."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import DatabaseError

from templates_engine import Definition, DefinitionError


@checks.register(checks.Tags.database)
def check_workflow_templates(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from .activities import get_activity
    from .models import WorkflowTemplate

    messages: list[checks.CheckMessage] = []
    try:
        templates = list(WorkflowTemplate.objects.values_list("pk", "key", "version", "definition"))
    except DatabaseError:
        return messages  # not migrated yet
    for pk, key, version, doc in templates:
        try:
            definition = Definition.parse(doc, version=version)
        except DefinitionError as exc:
            messages.append(
                checks.Error(
                    f"workflow template {key} v{version}: {exc}",
                    obj=f"WorkflowTemplate {pk}",
                    id="approvals.E001",
                )
            )
            continue
        for name in sorted(definition.activities()):
            if get_activity(name) is None:
                messages.append(
                    checks.Error(
                        f"workflow template {key} v{version} names activity {name!r}, "
                        "which is not registered",
                        hint="Register it with @activity(name) in an imported module.",
                        obj=f"WorkflowTemplate {pk}",
                        id="approvals.E002",
                    )
                )
    return messages
