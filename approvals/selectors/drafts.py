"""Drafts as their author sees them (approvals.access: the author alone reads one)."""

from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError as DjangoValidationError

from .. import access
from ..models import Draft, User

# How many drafts one person may keep: each is a row nobody else ever sees or cleans up.
DRAFTS_PER_PERSON = 100


def draft_get(*, user: User, draft_id: uuid.UUID | str) -> Draft | None:
    """The draft if ``user`` wrote it; None otherwise (another person's, another
    organisation's, or no such draft: one answer)."""
    try:
        draft = access.drafts_readable(user).get(pk=draft_id)
    except (Draft.DoesNotExist, ValueError, TypeError, DjangoValidationError):
        return None
    return draft if access.may_read_draft(user, draft) else None


def drafts_of(*, user: User) -> list[Draft]:
    """``user``'s drafts not yet submitted, the most recently changed first."""
    return list(
        access.drafts_readable(user)
        .filter(workflow__isnull=True)
        .order_by("-updated_at", "pk")[:DRAFTS_PER_PERSON]
    )


def draft_count(*, user: User) -> int:
    """How many drafts ``user`` keeps that are not yet submitted."""
    return access.drafts_readable(user).filter(workflow__isnull=True).count()
