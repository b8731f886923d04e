"""Which workflows are archived: their month's events have left the database for the
archive store (approvals.audit.archive) and the live index (``ArchivedWorkflow``) says
where they are. The one rule the command path (which refuses every command on them)
and the reads in place (approvals.audit.archived) share; it reads, and writes nothing."""

from __future__ import annotations

import uuid

from django.db.models import Exists, OuterRef, QuerySet

from ..audit.models import ArchivedMonth, ArchivedWorkflow

# The API's code and the words of a command refused on an archived workflow.
WORKFLOW_ARCHIVED = "WORKFLOW_ARCHIVED"
COMMAND_REFUSED = "This request is archived; it can be read but not changed."


def archived_in_place() -> QuerySet[ArchivedWorkflow]:
    """The index rows read from the archive now: their organisation's month is dropped
    from the database (a restored month's events are the database's again), tombstones
    included."""
    dropped = ArchivedMonth.objects.filter(
        tenant_id=OuterRef("tenant_id"), month=OuterRef("month"), dropped_at__isnull=False
    )
    return ArchivedWorkflow.objects.filter(Exists(dropped))


def is_archived(*, tenant_id: int, workflow_id: uuid.UUID | str) -> bool:
    """Is the workflow's history out of the database (archived, or deleted after it)?"""
    return archived_in_place().filter(tenant_id=tenant_id, workflow_id=workflow_id).exists()
