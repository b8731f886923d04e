"""Drafts as their author sees them (approvals.access: the author alone reads one)."""

from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError as DjangoValidationError

from .. import access
from ..models import Draft, DraftFile, User

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


def draft_file_name(draft_id: uuid.UUID | str, sha256: str) -> str:
    """Where a draft keeps its own copy of a file, in the attachments storage: under
    the draft, apart from the requests' files, so that it goes with the draft."""
    return f"drafts/{draft_id}/{sha256}"


def draft_files(*, draft: Draft) -> list[DraftFile]:
    """The files ``draft`` keeps, in the order they were added (the caller has checked
    that the draft may be read)."""
    return list(DraftFile.objects.filter(draft=draft).order_by("added_at", "pk"))


def draft_file_get(*, user: User, draft_id: uuid.UUID | str, sha256: str) -> DraftFile | None:
    """A file of a draft ``user`` wrote and has not submitted; None otherwise (another
    person's draft is the same as no draft)."""
    draft = draft_get(user=user, draft_id=draft_id)
    if draft is None or draft.workflow_id is not None:
        return None
    return DraftFile.objects.filter(draft=draft, sha256=sha256).first()
