"""Files on a request (receipts, quotes): checked, stored once under their SHA-256, and
recorded by a FileAttached event through the command path.

The bytes are read in chunks from wherever the upload landed (a temporary file: the
front doors install ``web.uploads.AttachmentUploadHandler``), never whole in memory.
The type is sniffed from the content, never taken from the name; a file is refused
before anything is stored or recorded. A stored file is never changed or deleted:
the same bytes attached twice are one file, named twice in the history.
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
import uuid
from dataclasses import dataclass
from typing import IO, Any

import filetype
from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages

from templates_engine import commands as cmd

from .. import access
from ..data_words import file_size
from ..models import User
from ..runtime.commands import (
    CommandResult,
)
from ..selectors.attachments import STORAGE_ALIAS, stored_name
from .workflows import _readable, reader_addition

CHUNK_BYTES = 64 * 1024
SNIFF_BYTES = 8192  # more than any signature filetype reads

# Sniffed type -> how people call it.
ACCEPTED_TYPES = {
    "application/pdf": "PDF",
    "image/png": "PNG image",
    "image/jpeg": "JPEG image",
    "image/webp": "WebP image",
    "image/heic": "HEIC photo",
}

NOT_ACCEPTED = (
    "This file is not a PDF, PNG, JPEG, WebP or HEIC file, whatever its name says; "
    "attach a scan or a photo of the receipt instead."
)
TOO_LARGE = "This file is {size}; the largest accepted is {limit}."
TOO_LARGE_CUT_OFF = "This file is larger than {limit}, the largest accepted."
NO_FILE = "Choose a file to attach."
NOT_ACCEPTED_CODE = "FILE_TYPE_NOT_ACCEPTED"
TOO_LARGE_CODE = "FILE_TOO_LARGE"
NO_FILE_CODE = "NO_FILE"


class AttachmentRefused(Exception):
    """The file was not stored and nothing was recorded."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class AttachmentAdded:
    result: CommandResult
    sha256: str
    name: str
    size: int
    content_type: str


def too_large_message(size: int | None = None) -> str:
    """Why a file over the limit was refused; ``size`` None when the upload was cut
    off as it streamed past the limit."""
    limit = file_size(settings.APPROVALS_FILE_MAX_BYTES)
    if size is None:
        return TOO_LARGE_CUT_OFF.format(limit=limit)
    return TOO_LARGE.format(size=file_size(size), limit=limit)


def attachment_storage() -> Storage:
    return storages[STORAGE_ALIAS]


def clean_file_name(name: str) -> str:
    """The name as the person's computer gave it, without folders or control
    characters, at most 255 characters (the extension kept)."""
    base = os.path.basename(name.replace("\\", "/"))
    base = "".join(c for c in base if unicodedata.category(c)[0] != "C").strip()
    if not base:
        return "file"
    if len(base) > 255:
        stem, ext = os.path.splitext(base)
        base = stem[: 255 - len(ext[:16])] + ext[:16]
    return base


def sniff(stream: IO[bytes]) -> str | None:
    """The accepted type the content starts like, else None."""
    stream.seek(0)
    head = stream.read(SNIFF_BYTES)
    stream.seek(0)
    kind = filetype.guess(head) if head else None
    if kind is None or kind.mime not in ACCEPTED_TYPES:
        return None
    return str(kind.mime)


def _hash(stream: IO[bytes]) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    stream.seek(0)
    while chunk := stream.read(CHUNK_BYTES):
        digest.update(chunk)
        size += len(chunk)
    stream.seek(0)
    return digest.hexdigest(), size


def file_store(*, stream: IO[bytes], sha256: str) -> str:
    """Keep the bytes under their hash, once; returns the stored name. Two uploads of
    the same bytes racing each other both end with the one copy."""
    storage = attachment_storage()
    name = stored_name(sha256)
    if storage.exists(name):
        return name
    stream.seek(0)
    saved = storage.save(name, File(stream, name=sha256))
    if saved != name:  # another upload of the same bytes saved first: keep theirs
        storage.delete(saved)
    return name


def attachment_add(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    upload: Any,
    request_id: str,
    too_large: bool = False,
) -> AttachmentAdded:
    """Check, store and record a file ``user`` adds to a request. ``upload`` is an
    UploadedFile (or None when none was sent); ``too_large`` says the upload handler
    cut it off past the limit. Raises WorkflowNotFound when the user may not read the
    request, access.Forbidden for an auditor, AttachmentRefused (nothing stored or
    recorded) for a file of another type or over the limit."""
    wf = _readable(user, workflow_id)
    if not access.may_attach(user, wf):
        raise access.Forbidden(access.FORBIDDEN_ATTACH)
    if too_large:
        raise AttachmentRefused(TOO_LARGE_CODE, too_large_message())
    if upload is None:
        raise AttachmentRefused(NO_FILE_CODE, NO_FILE)
    size = int(upload.size or 0)
    if size > settings.APPROVALS_FILE_MAX_BYTES:
        raise AttachmentRefused(TOO_LARGE_CODE, too_large_message(size))
    upload.open("rb")
    content_type = sniff(upload)
    if content_type is None:
        raise AttachmentRefused(NOT_ACCEPTED_CODE, NOT_ACCEPTED)
    sha256, size = _hash(upload)
    if size > settings.APPROVALS_FILE_MAX_BYTES:
        raise AttachmentRefused(TOO_LARGE_CODE, too_large_message(size))
    file_store(stream=upload, sha256=sha256)
    name = clean_file_name(str(upload.name or ""))

    result = reader_addition(
        user=user,
        wf=wf,
        command=cmd.Attach(user.username, sha256, name, size, content_type),
        request_id=request_id,
    )
    return AttachmentAdded(result, sha256, name, size, content_type)
