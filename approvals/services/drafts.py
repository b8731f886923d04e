"""Drafts: a request saved before it is submitted. Nothing is routed and nothing enters
the event history until ``draft_submit``, which starts the workflow exactly as
``workflow_start`` does (the same checks, the same start policy) with the key the draft
was given when it was made, so a second submission starts nothing more."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction

from templates_engine import CommandRejected
from templates_engine import errors as engine_errors
from templates_engine.expressions import data_problems

from .. import access, clock
from ..definitions import definition_for
from ..models import Draft, StartRequest, User
from ..selectors.drafts import DRAFTS_PER_PERSON, draft_count
from ..selectors.templates import workflow_template_latest
from .workflows import (
    TEMPLATE_NOT_FOUND,
    TEMPLATE_RETIRED,
    StartResult,
    TemplateNotFound,
    TemplateRetired,
    workflow_start,
)

DRAFT_NOT_FOUND = "No such draft."
# A draft keeps what its author has typed so far; a whole request fits in far less.
DRAFT_DATA_MAX_BYTES = 64 * 1024
DRAFT_TOO_LARGE = (
    "A draft's data may be at most 64 KB of JSON; this is {size} bytes. Nothing was saved."
)
TOO_MANY_DRAFTS = (
    f"You keep {DRAFTS_PER_PERSON} drafts already; submit or delete one before saving another."
)
DRAFT_SUBMITTED = "This draft was submitted already; it can no longer be changed or deleted."
SUBJECT_MISSING = "Give the request its reference (the subject's type and id) before submitting it."
SUBJECT_TYPE_MAX, SUBJECT_ID_MAX = 64, 128
SUBJECT_INVALID = (
    "A subject's type is at most 64 characters and its id at most 128, with no NUL "
    "character in either."
)

# Codes of DraftRefused, for the API's envelope.
DRAFT_TOO_LARGE_CODE = "DRAFT_TOO_LARGE"
TOO_MANY_DRAFTS_CODE = "TOO_MANY_DRAFTS"
DRAFT_SUBMITTED_CODE = "DRAFT_SUBMITTED"
SUBJECT_MISSING_CODE = "SUBJECT_MISSING"
SUBJECT_INVALID_CODE = "SUBJECT_INVALID"


class DraftNotFound(Exception):
    """No draft of this id that the caller wrote (another person's is the same)."""


class DraftRefused(Exception):
    """A draft operation that changed nothing; ``code`` names why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def draft_save(
    *,
    author: User,
    template_key: str,
    subject_type: str = "",
    subject_id: str = "",
    data: dict[str, Any],
    scope: access.Scope | None = None,
) -> Draft:
    """Save a new draft. Only what is there is checked (types and limits against the
    newest version of the workflow template's schema); what is missing may be added
    later. Raises access.Forbidden for someone who may not start this workflow
    template, TemplateNotFound / TemplateRetired, CommandRejected (INVALID_DATA) and
    DraftRefused."""
    _check(author, template_key, subject_type, subject_id, data, scope)
    if draft_count(user=author) >= DRAFTS_PER_PERSON:
        raise DraftRefused(TOO_MANY_DRAFTS_CODE, TOO_MANY_DRAFTS)
    now = clock.now()
    return Draft.objects.create(
        tenant_id=author.member_tenant_id,
        author=author,
        template_key=template_key,
        subject_type=subject_type,
        subject_id=subject_id,
        data=data,
        created_at=now,
        updated_at=now,
    )


def draft_update(
    *,
    author: User,
    draft_id: uuid.UUID | str,
    template_key: str,
    subject_type: str = "",
    subject_id: str = "",
    data: dict[str, Any],
    scope: access.Scope | None = None,
) -> Draft:
    """Replace what a draft holds, checked as ``draft_save`` checks it. Raises
    DraftNotFound for a draft the author did not write and DraftRefused for one
    already submitted."""
    with transaction.atomic():
        # Someone else's draft is not found, whatever they may or may not do.
        draft = _locked(author, draft_id)
        if draft.workflow_id is not None:
            raise DraftRefused(DRAFT_SUBMITTED_CODE, DRAFT_SUBMITTED)
        _check(author, template_key, subject_type, subject_id, data, scope)
        draft.template_key = template_key
        draft.subject_type = subject_type
        draft.subject_id = subject_id
        draft.data = data
        draft.updated_at = clock.now()
        draft.save()
    return draft


def draft_delete(*, author: User, draft_id: uuid.UUID | str) -> None:
    """Delete a draft not yet submitted (nothing else knows of it)."""
    with transaction.atomic():
        draft = _locked(author, draft_id)
        if draft.workflow_id is not None:
            raise DraftRefused(DRAFT_SUBMITTED_CODE, DRAFT_SUBMITTED)
        draft.delete()


def draft_submit(
    *, author: User, draft_id: uuid.UUID | str, scope: access.Scope | None = None
) -> StartResult:
    """Start the draft's workflow: ``workflow_start`` with the draft's idempotency key,
    so the data is checked against the whole schema and the start policy applies as for
    any start. The draft is locked meanwhile; a second submission (at once, or later)
    answers as the first did, ``replayed``. When the start is refused nothing changes
    and the draft stays a draft."""
    with transaction.atomic():
        draft = _locked(author, draft_id)
        if draft.workflow_id is not None:
            prior = StartRequest.objects.filter(
                tenant_id=draft.tenant_id, user=author, key=draft.idempotency_key
            ).first()
            if prior is not None and prior.response is not None:
                return StartResult.replay(prior.response)
        if not draft.subject_type or not draft.subject_id:
            raise DraftRefused(SUBJECT_MISSING_CODE, SUBJECT_MISSING)
        result = workflow_start(
            submitter=author,
            template_key=draft.template_key,
            subject_type=draft.subject_type,
            subject_id=draft.subject_id,
            data=draft.data,
            idempotency_key=draft.idempotency_key,
            scope=scope,
        )
        if draft.workflow_id is None:
            draft.workflow_id = result.workflow_id
            draft.submitted_at = clock.now()
            draft.save(update_fields=["workflow", "submitted_at"])
    return result


def _locked(author: User, draft_id: uuid.UUID | str) -> Draft:
    try:
        draft = access.drafts_readable(author).select_for_update().get(pk=draft_id)
    except (Draft.DoesNotExist, ValueError, TypeError, DjangoValidationError) as exc:
        raise DraftNotFound(DRAFT_NOT_FOUND) from exc
    if not access.may_read_draft(author, draft):
        raise DraftNotFound(DRAFT_NOT_FOUND)
    return draft


def _check(
    author: User,
    template_key: str,
    subject_type: str,
    subject_id: str,
    data: dict[str, Any],
    scope: access.Scope | None,
) -> None:
    access.check_may_start(author, template_key, scope)
    if (
        len(subject_type) > SUBJECT_TYPE_MAX
        or len(subject_id) > SUBJECT_ID_MAX
        or "\x00" in subject_type + subject_id
    ):
        raise DraftRefused(SUBJECT_INVALID_CODE, SUBJECT_INVALID)
    size = len(json.dumps(data, separators=(",", ":"), ensure_ascii=False, default=str).encode())
    if size > DRAFT_DATA_MAX_BYTES:
        raise DraftRefused(DRAFT_TOO_LARGE_CODE, DRAFT_TOO_LARGE.format(size=size))
    template = workflow_template_latest(tenant_id=author.member_tenant_id, key=template_key)
    if template is None:
        raise TemplateNotFound(TEMPLATE_NOT_FOUND.format(key=template_key))
    if template.retired_at is not None:
        raise TemplateRetired(TEMPLATE_RETIRED.format(key=template_key))
    definition = definition_for(template.pk)
    problems = definition.draft_errors(data) or data_problems(data)
    if problems:
        raise CommandRejected(engine_errors.INVALID_DATA, "; ".join(problems))
