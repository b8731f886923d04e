"""Publishing workflow template definitions."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from templates_engine import Definition

from ..models import Tenant, User, WorkflowTemplate


def workflow_template_publish(
    *, tenant: Tenant, definition: dict[str, Any], published_by: User | None = None
) -> WorkflowTemplate:
    """Validate ``definition`` and publish it as the next version of its key.

    Raises DefinitionError (naming the JSON path) and publishes nothing when the
    definition does not validate. A published version is never edited.
    """
    parsed = Definition.parse(definition)
    with transaction.atomic():
        latest = (
            WorkflowTemplate.objects.select_for_update()
            .filter(tenant=tenant, key=parsed.key)
            .order_by("-version")
            .first()
        )
        if latest is not None and latest.definition == definition:
            return latest
        version = (latest.version + 1) if latest is not None else 1
        Definition.parse(definition, version=version)
        return WorkflowTemplate.objects.create(
            tenant=tenant,
            key=parsed.key,
            version=version,
            title=parsed.title,
            definition=definition,
            published_by=published_by,
        )
