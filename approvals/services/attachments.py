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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO, Any

import filetype
from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages

from templates_engine import commands as cmd

from .. import access
from ..models import User, Workflow
from ..runtime.commands import (
    CommandResult,
)
from ..selectors.attachments import STORAGE_ALIAS, attachment_hashes, stored_name
from ..words.data import file_size
from .previews import image_too_large, preview_store
from .workflows import readable_for, reader_addition

CHUNK_BYTES = 64 * 1024
SNIFF_BYTES = 8192  # more than any signature filetype reads

# Sniffed type -> how people call it. APPROVALS_FILE_TYPES picks among these.
ACCEPTED_TYPES = {
    "application/pdf": "PDF",
    "image/png": "PNG image",
    "image/jpeg": "JPEG image",
    "image/webp": "WebP image",
    "image/heic": "HEIC photo",
}
_SHORT = {
    "application/pdf": "PDF",
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/webp": "WebP",
    "image/heic": "HEIC",
}
_EXTENSIONS = {
    "application/pdf": ".pdf",
    "image/png": ".png",
    "image/jpeg": ".jpg,.jpeg",
    "image/webp": ".webp",
    "image/heic": ".heic",
}

NOT_ACCEPTED_TEMPLATE = (
    "This file is not a {kinds} file, whatever its name says; "
    "attach a scan or a photo of the receipt instead."
)
NOT_ACCEPTED = NOT_ACCEPTED_TEMPLATE.format(kinds="PDF, PNG, JPEG, WebP or HEIC")
TOO_LARGE = "This file is {size}; the largest accepted is {limit}."
TOO_LARGE_CUT_OFF = "This file is larger than {limit}, the largest accepted."
NO_FILE = "Choose a file to attach."
TOO_MANY_AT_ONCE = "Attach at most {limit} files at a time; you chose {count}."
TOO_MANY_ON_REQUEST = (
    "A request holds at most {limit} files; this one has {have}, so {room} more can be added."
)
REQUEST_FULL = "A request holds at most {limit} files, and this one has them all."
NOT_ACCEPTED_CODE = "FILE_TYPE_NOT_ACCEPTED"
TOO_LARGE_CODE = "FILE_TOO_LARGE"
NO_FILE_CODE = "NO_FILE"
TOO_MANY_CODE = "TOO_MANY_FILES"
IMAGE_TOO_LARGE_CODE = "IMAGE_TOO_LARGE"


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


@dataclass(frozen=True)
class CheckedFile:
    """A file that passed every check and may be stored and recorded."""

    upload: Any
    sha256: str
    name: str
    size: int
    content_type: str


def accepted_types() -> list[str]:
    """The sniffed types accepted here (APPROVALS_FILE_TYPES, among the known ones)."""
    return [t for t in settings.APPROVALS_FILE_TYPES if t in ACCEPTED_TYPES]


def _in_words(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def not_accepted_message() -> str:
    return NOT_ACCEPTED_TEMPLATE.format(kinds=_in_words([_SHORT[t] for t in accepted_types()]))


def accepted_hint() -> str:
    """What the file fields say they take, e.g. "A PDF, PNG, JPEG, WebP or HEIC file"."""
    return "A " + _in_words([_SHORT[t] for t in accepted_types()]) + " file"


def accept_attribute() -> str:
    """The file inputs' ``accept``: the types and their usual extensions."""
    types = accepted_types()
    return ",".join(types + [_EXTENSIONS[t] for t in types])


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
    if kind is None or kind.mime not in accepted_types():
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


def _refused(code: str, message: str, name: str, several: bool) -> AttachmentRefused:
    """A refusal; when several files came, it names the one it is about."""
    return AttachmentRefused(code, f"{name}: {message}" if several else message)


def attachment_check(upload: Any, *, several: bool = False) -> CheckedFile:
    """One uploaded file checked: size, type told by the content, an image's pixels.
    Raises AttachmentRefused; reads the file in chunks, stores nothing."""
    name = clean_file_name(str(upload.name or ""))
    size = int(upload.size or 0)
    if size > settings.APPROVALS_FILE_MAX_BYTES:
        raise _refused(TOO_LARGE_CODE, too_large_message(size), name, several)
    upload.open("rb")
    content_type = sniff(upload)
    if content_type is None:
        raise _refused(NOT_ACCEPTED_CODE, not_accepted_message(), name, several)
    if content_type.startswith("image/") and (why := image_too_large(upload)):
        raise _refused(IMAGE_TOO_LARGE_CODE, why, name, several)
    sha256, size = _hash(upload)
    if size > settings.APPROVALS_FILE_MAX_BYTES:
        raise _refused(TOO_LARGE_CODE, too_large_message(size), name, several)
    return CheckedFile(upload, sha256, name, size, content_type)


def room_message(have: int) -> str:
    limit = settings.APPROVALS_FILES_PER_REQUEST
    if have >= limit:
        return REQUEST_FULL.format(limit=limit)
    return TOO_MANY_ON_REQUEST.format(limit=limit, have=have, room=limit - have)


def attachments_check(
    *,
    uploads: Sequence[Any],
    sent: int | None = None,
    cut_off: Sequence[str] = (),
    already: set[str] | None = None,
) -> list[CheckedFile]:
    """The files of one form or API call checked together, before anything is started,
    stored or recorded: at most APPROVALS_FILES_PER_UPLOAD of them (``sent`` counts
    the parts the upload handler saw, kept or skipped), none cut off past the size
    limit (``cut_off`` names them), each of an accepted type and size, and room on the
    request for the new ones (``already``: the hashes it holds). None is fine: [].
    Raises AttachmentRefused with the first problem in words."""
    count = max(sent or 0, len(uploads) + len(cut_off))
    limit = settings.APPROVALS_FILES_PER_UPLOAD
    if count > limit:
        raise AttachmentRefused(TOO_MANY_CODE, TOO_MANY_AT_ONCE.format(limit=limit, count=count))
    several = count > 1
    if cut_off:
        raise _refused(TOO_LARGE_CODE, too_large_message(), clean_file_name(cut_off[0]), several)
    files = [attachment_check(upload, several=several) for upload in uploads]
    have = already or set()
    new = {f.sha256 for f in files} - have
    if len(have) + len(new) > settings.APPROVALS_FILES_PER_REQUEST:
        raise AttachmentRefused(TOO_MANY_CODE, room_message(len(have)))
    return files


def file_request_id(base: str, index: int) -> str:
    """The request id of the ``index``th file of a form or call whose own id is
    ``base``: derived, so a repeat of the same call records each file once."""
    rid = f"{base}:f{index}"
    if len(rid) > 128:
        rid = hashlib.sha256(base.encode()).hexdigest() + f":f{index}"
    return rid


def _room_for(sha256: str) -> Any:
    """With the workflow locked: refuse a new file past APPROVALS_FILES_PER_REQUEST
    (two uploads at once cannot both take the last place)."""

    def check(user: User, locked: Workflow) -> None:
        have = attachment_hashes(workflow_id=locked.pk)
        if sha256 not in have and len(have) >= settings.APPROVALS_FILES_PER_REQUEST:
            raise AttachmentRefused(TOO_MANY_CODE, room_message(len(have)))

    return check


def attachment_record(
    *, readable: access.ReadableWorkflow, file: CheckedFile, request_id: str
) -> AttachmentAdded:
    """Store a checked file once (its preview too, when it can be made) and record it
    by a FileAttached event through the command path, on the request the read rule let
    the user read (``readable``)."""
    user = readable.user
    file_store(stream=file.upload, sha256=file.sha256)
    preview_store(sha256=file.sha256, upload=file.upload, content_type=file.content_type)
    result = reader_addition(
        readable=readable,
        command=cmd.Attach(user.username, file.sha256, file.name, file.size, file.content_type),
        request_id=request_id,
        also=_room_for(file.sha256),
    )
    return AttachmentAdded(result, file.sha256, file.name, file.size, file.content_type)


def attachments_add(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    files: Sequence[CheckedFile],
    request_id: str,
    readable: access.ReadableWorkflow | None = None,
) -> list[AttachmentAdded]:
    """Record checked files on a request, each with a request id derived from
    ``request_id`` (the id of the start, comment or resubmission they came with).
    ``readable``: the read rule's answer when the caller asked it already."""
    if not files:
        return []
    readable = readable_for(user, workflow_id, readable)
    access.check_may_attach(user)
    return [
        attachment_record(
            readable=readable, file=file, request_id=file_request_id(request_id, index)
        )
        for index, file in enumerate(files)
    ]


def attachment_add(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    upload: Any,
    request_id: str,
    too_large: bool = False,
    sent: int = 0,
    readable: access.ReadableWorkflow | None = None,
) -> AttachmentAdded:
    """Check, store and record a file ``user`` adds to a request. ``upload`` is an
    UploadedFile (or None when none was sent); ``too_large`` says the upload handler
    cut it off past the limit; ``sent`` is how many file parts the call carried (the
    handler's count: past APPROVALS_FILES_PER_UPLOAD it kept none of the rest). Raises
    WorkflowNotFound when the user may not read the request, access.Forbidden for an
    auditor, AttachmentRefused (nothing stored or recorded) for a file of another type
    or over a limit. ``readable``: the read rule's answer when the caller asked it."""
    readable = readable_for(user, workflow_id, readable)
    access.check_may_attach(user)
    limit = settings.APPROVALS_FILES_PER_UPLOAD
    if sent > limit:
        raise AttachmentRefused(TOO_MANY_CODE, TOO_MANY_AT_ONCE.format(limit=limit, count=sent))
    if too_large:
        raise AttachmentRefused(TOO_LARGE_CODE, too_large_message())
    if upload is None:
        raise AttachmentRefused(NO_FILE_CODE, NO_FILE)
    already = attachment_hashes(workflow_id=readable.workflow.pk)
    (file,) = attachments_check(uploads=[upload], already=already)
    return attachment_record(readable=readable, file=file, request_id=request_id)
