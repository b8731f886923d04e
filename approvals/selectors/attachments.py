"""Reading the files on a request: only for people who may read the request, and only
files its history names (a hash from another request finds nothing)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import IO

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.storage import storages

from .. import access
from ..models import User, WorkflowEvent

STORAGE_ALIAS = "attachments"  # the storage alias in settings.STORAGES
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Attachment:
    sha256: str
    name: str
    size: int
    content_type: str


def attachment_get(*, user: User, workflow_id: uuid.UUID | str, sha256: str) -> Attachment | None:
    """The file ``sha256`` as the request's history names it (the first time it was
    attached), or None when there is no such file on the request or ``user`` may not
    read the request."""
    if not _SHA256.match(sha256):
        return None
    try:
        wf = access.workflow_readable(user, workflow_id)
    except (ValueError, TypeError, DjangoValidationError):
        return None
    if wf is None:
        return None
    event = (
        WorkflowEvent.objects.filter(workflow_id=wf.pk, type="FileAttached", payload__sha256=sha256)
        .order_by("seq")
        .only("payload")
        .first()
    )
    if event is None:
        return None
    p = event.payload
    return Attachment(sha256, str(p["name"]), int(p["size"]), str(p["content_type"]))


def stored_name(sha256: str) -> str:
    """Where the bytes of ``sha256`` are kept: content-addressed, two-level."""
    return f"{sha256[:2]}/{sha256}"


def preview_name(sha256: str) -> str:
    """Where the preview of the file ``sha256`` is kept (a small PNG), if it has one."""
    return f"previews/{sha256[:2]}/{sha256}.png"


def attachment_hashes(*, workflow_id: uuid.UUID | str) -> set[str]:
    """The SHA-256 of every file the request's history names (a file attached twice
    counts once)."""
    return set(
        WorkflowEvent.objects.filter(workflow_id=workflow_id, type="FileAttached").values_list(
            "payload__sha256", flat=True
        )
    )


def preview_exists(sha256: str) -> bool:
    return bool(storages[STORAGE_ALIAS].exists(preview_name(sha256)))


def preview_open(attachment: Attachment) -> IO[bytes] | None:
    """The stored preview of ``attachment``, or None when it has none."""
    storage = storages[STORAGE_ALIAS]
    name = preview_name(attachment.sha256)
    if not storage.exists(name):
        return None
    return storage.open(name, "rb")


def attachment_open(attachment: Attachment) -> IO[bytes]:
    """The stored bytes, opened for reading in chunks."""
    return storages[STORAGE_ALIAS].open(stored_name(attachment.sha256), "rb")
