"""Publishing, retiring and rolling back workflow template definitions."""

from __future__ import annotations

from typing import Any

from templates_engine import Definition, DefinitionError

from .. import clock
from ..models import Tenant, User, WorkflowTemplate
from ..runtime import tenant_scope
from ..selectors.templates import workflow_template_problems

ALREADY_RETIRED = "{key} is already retired."


class DefinitionRefused(DefinitionError):
    """A definition that may not be published in this tenant. ``problems`` holds
    every problem found, each at its JSON path; the exception itself reads as the
    first, so callers that show one message still name a field."""

    def __init__(self, problems: list[DefinitionError]) -> None:
        assert problems
        super().__init__(problems[0].path, problems[0].problem)
        self.problems = problems


def workflow_template_publish(
    *, tenant: Tenant, definition: dict[str, Any], published_by: User | None = None
) -> WorkflowTemplate:
    """Validate ``definition`` and publish it as the next version of its key.

    Raises DefinitionRefused (every problem, each naming its JSON path) and publishes
    nothing when the definition does not validate or names a group, user, activity or
    data field this tenant does not have. A published version is never edited; the
    new version is open for starts even when the one before it was retired.
    """
    problems = workflow_template_problems(tenant_id=tenant.pk, doc=definition)
    if problems:
        raise DefinitionRefused(problems)
    parsed = Definition.parse(definition)
    with tenant_scope.atomic_for(tenant):
        latest = (
            WorkflowTemplate.objects.select_for_update()
            .filter(tenant=tenant, key=parsed.key)
            .order_by("-version")
            .first()
        )
        if latest is not None and latest.definition == definition and latest.retired_at is None:
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


def workflow_template_rollback(
    *, template: WorkflowTemplate, published_by: User | None = None
) -> WorkflowTemplate:
    """Publish a copy of the earlier version ``template`` as the newest version. Its
    references are checked again: a group deleted since refuses the roll back."""
    return workflow_template_publish(
        tenant=template.tenant, definition=template.definition, published_by=published_by
    )


class AlreadyRetired(Exception):
    pass


def workflow_template_retire(*, tenant: Tenant, key: str, retired_by: User | None) -> None:
    """Refuse new starts of ``key`` from now on: its newest version is marked retired.
    Running workflows keep their version and finish; publishing a version (or rolling
    back) opens the workflow template again."""
    with tenant_scope.atomic_for(tenant):
        latest = (
            WorkflowTemplate.objects.select_for_update()
            .filter(tenant=tenant, key=key)
            .order_by("-version")
            .first()
        )
        if latest is None:
            raise WorkflowTemplate.DoesNotExist(key)
        if latest.retired_at is not None:
            raise AlreadyRetired(ALREADY_RETIRED.format(key=key))
        latest.retired_at = clock.now()
        latest.retired_by = retired_by
        latest.save(update_fields=["retired_at", "retired_by"])
