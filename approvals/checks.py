"""System checks: every published version of every workflow template still validates,
and what it names (groups, users, activities, data fields) still resolves in its
organisation: a group deleted after publishing is reported here, before a workflow
started on that version stalls with no approvers.

They read the database, so they run only when a command asks for the database
(``check --database default``, ``migrate``), never for the others. A person named in a
template who has been deactivated (or cannot act) is a warning, and an item on the
organisation admin's attention page: one deactivation must never stop an operator's
commands."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import DEFAULT_DB_ALIAS, DatabaseError

from templates_engine import Definition, DefinitionError


@checks.register(checks.Tags.database)
def check_workflow_templates(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    from .models import WorkflowTemplate
    from .selectors.templates import workflow_template_problems

    messages: list[checks.CheckMessage] = []
    if not databases or DEFAULT_DB_ALIAS not in databases:
        return messages  # not asked to look at the database
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
            if problem.path.endswith(".user"):
                messages.append(
                    checks.Warning(
                        f"workflow template {key} v{version}: {problem}",
                        hint="Publish a version that names someone who can act; the "
                        "organisation admin's attention page lists it too.",
                        obj=f"WorkflowTemplate {pk}",
                        id="approvals.W002",
                    )
                )
                continue
            messages.append(
                checks.Error(
                    f"workflow template {key} v{version}: {problem}",
                    hint="Publish a version that names what exists, or restore what it names.",
                    obj=f"WorkflowTemplate {pk}",
                    id="approvals.E002",
                )
            )
    return messages
