"""Drafts: a request saved before it is submitted. Nothing is routed and nothing enters
the event history until ``draft_submit``, which starts the workflow exactly as
``workflow_start`` does (the same checks, the same start policy) with the key the draft
was given when it was made, so a second submission starts nothing more."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files import File
from django.db import transaction

from templates_engine import CommandRejected
from templates_engine import errors as engine_errors
from templates_engine.expressions import data_problems

from .. import access, clock
from ..definitions import definition_for
from ..models import Draft, DraftFile, StartRequest, User
from ..runtime import tenant_scope
from ..selectors.drafts import DRAFTS_PER_PERSON, draft_count, draft_file_name
from ..selectors.templates import workflow_template_latest
from .attachments import (
    TOO_MANY_CODE,
    CheckedFile,
    attachment_record,
    attachment_storage,
    file_request_id,
    room_message,
)
from .workflows import (
    TEMPLATE_NOT_FOUND,
    TEMPLATE_RETIRED,
    StartResult,
    TemplateNotFound,
    TemplateRetired,
    readable_for,
    workflow_start,
)

log = logging.getLogger(__name__)

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


@tenant_scope.atomic_for_tenant_of("author")
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
    with tenant_scope.atomic_for(author):
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
    """Delete a draft not yet submitted (nothing else knows of it), and its copies of
    its files once that is committed: no request ever reads them (a submitted draft's
    files are the request's own by then), so nothing needs to be asked first."""
    with tenant_scope.atomic_for(author):
        draft = _locked(author, draft_id)
        if draft.workflow_id is not None:
            raise DraftRefused(DRAFT_SUBMITTED_CODE, DRAFT_SUBMITTED)
        names = _copies(draft)
        draft.delete()
        transaction.on_commit(lambda: _remove(names))


def draft_files_add(
    *, author: User, draft_id: uuid.UUID | str, files: Sequence[CheckedFile]
) -> list[DraftFile]:
    """Keep checked files (``attachments.attachments_check``: the same types, sizes and
    pixels as a request's) with a draft not yet submitted, each once (by its SHA-256),
    at most APPROVALS_FILES_PER_REQUEST of them in all, counted with the draft locked.
    Returns the files that were new to the draft. Raises DraftNotFound, DraftRefused
    (a submitted draft; no room: nothing kept)."""
    if not files:
        return []
    storage = attachment_storage()
    stored: list[str] = []
    try:
        with tenant_scope.atomic_for(author):
            draft = _locked(author, draft_id)
            if draft.workflow_id is not None:
                raise DraftRefused(DRAFT_SUBMITTED_CODE, DRAFT_SUBMITTED)
            have = set(DraftFile.objects.filter(draft=draft).values_list("sha256", flat=True))
            new = list({f.sha256: f for f in files if f.sha256 not in have}.values())
            if len(have) + len(new) > settings.APPROVALS_FILES_PER_REQUEST:
                raise DraftRefused(TOO_MANY_CODE, room_message(len(have)))
            now = clock.now()
            rows = []
            for file in new:
                name = draft_file_name(draft.pk, file.sha256)
                file.upload.seek(0)
                stored.append(storage.save(name, File(file.upload, name=file.sha256)))
                rows.append(
                    DraftFile(
                        draft=draft,
                        tenant_id=draft.tenant_id,
                        sha256=file.sha256,
                        name=file.name,
                        size=file.size,
                        content_type=file.content_type,
                        added_at=now,
                    )
                )
            DraftFile.objects.bulk_create(rows)
            draft.updated_at = now
            draft.save(update_fields=["updated_at"])
    except BaseException:
        _remove(stored)  # nothing was kept: neither are the copies
        raise
    return rows


def _carry_files(author: User, draft: Draft, workflow_id: uuid.UUID) -> None:
    """With the draft locked, in the transaction that started its request: record the
    draft's files on it as any file is (stored once under its hash, previewed, a
    FileAttached event each, with request ids derived from the draft's key), then drop
    the draft's rows, and its copies once that is committed."""
    files = list(DraftFile.objects.filter(draft=draft).order_by("added_at", "pk"))
    if not files:
        return
    storage = attachment_storage()
    readable = readable_for(author, workflow_id)
    for index, row in enumerate(files):
        with storage.open(draft_file_name(draft.pk, row.sha256), "rb") as stream:
            attachment_record(
                readable=readable,
                file=CheckedFile(stream, row.sha256, row.name, row.size, row.content_type),
                request_id=file_request_id(draft.idempotency_key, index),
            )
    names = _copies(draft)
    DraftFile.objects.filter(draft=draft).delete()
    transaction.on_commit(lambda: _remove(names))


def _copies(draft: Draft) -> list[str]:
    return [
        draft_file_name(draft.pk, sha)
        for sha in DraftFile.objects.filter(draft=draft).values_list("sha256", flat=True)
    ]


def _remove(names: Sequence[str]) -> None:
    """Delete a draft's copies from storage; one that cannot be deleted now is logged
    (it is under the draft's own folder, which nothing reads any more)."""
    storage = attachment_storage()
    for name in names:
        try:
            storage.delete(name)
        except Exception:
            log.warning("a deleted draft's file could not be removed: %s", name, exc_info=True)


def draft_submit(
    *, author: User, draft_id: uuid.UUID | str, scope: access.Scope | None = None
) -> StartResult:
    """Start the draft's workflow: ``workflow_start`` with the draft's idempotency key,
    so the data is checked against the whole schema and the start policy applies as for
    any start. The draft is locked meanwhile; a second submission (at once, or later)
    answers as the first did, ``replayed``. When the start is refused nothing changes
    and the draft stays a draft."""
    with tenant_scope.atomic_for(author):
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
        if draft.workflow_id is None and not result.existing and not result.replayed:
            _carry_files(author, draft, result.workflow_id)
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
