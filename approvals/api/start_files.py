"""A start through the API with files: ``POST /api/workflows`` as multipart/form-data,
the start's JSON in a part named ``body`` and the files in parts named ``file``. The
files are checked (count, size, type, pixels) before the workflow is started, so a
refused file starts nothing; they are recorded on the new request right after it.
A plain JSON body starts with no files, as before."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import exceptions
from rest_framework.request import Request

from .. import json_input
from ..models import User
from ..services.attachments import (
    AttachmentAdded,
    CheckedFile,
    attachments_add,
    attachments_check,
)
from ..services.workflows import StartResult
from ..web.uploads import AttachmentUploadHandler, stream_uploads

BODY_PART_MISSING = (
    'A start sent as multipart/form-data carries its JSON in a part named "body" '
    '(and its files in parts named "file").'
)


def is_multipart(request: Any) -> bool:
    return str(request.META.get("CONTENT_TYPE", "")).startswith("multipart/form-data")


def prepare(request: Any) -> None:
    """Before anything reads the body: a multipart start's files stream to disk."""
    if request.method == "POST" and is_multipart(request):
        request._attachment_upload = stream_uploads(request)


def body_and_files(request: Request) -> tuple[Any, list[CheckedFile]]:
    """The start's JSON and its checked files (none for a JSON body). Raises
    ValidationError for a missing or malformed ``body`` part, AttachmentRefused for a
    refused file."""
    if not is_multipart(request):
        return request.data, []
    raw = request.data.get("body") if isinstance(request.data, Mapping) else None
    if not isinstance(raw, str):
        raise exceptions.ValidationError({"body": [BODY_PART_MISSING]})
    try:
        body = json_input.loads(raw)
    except json_input.JsonInputError as exc:
        where = "body" if exc.path == "$" else f"body.{exc.path}"
        raise exceptions.ValidationError({where: [exc.problem]}) from exc
    except ValueError as exc:
        raise exceptions.ValidationError({"body": [f"JSON parse error - {exc}"]}) from exc
    handler: AttachmentUploadHandler = request._request._attachment_upload  # type: ignore[attr-defined]
    files = attachments_check(
        uploads=request.FILES.getlist("file"), sent=handler.sent, cut_off=handler.cut_off
    )
    return body, files


def record(
    *, user: User, result: StartResult, files: list[CheckedFile], request_id: str
) -> list[dict[str, Any]]:
    """Record the files on the started request; what the answer lists of them."""
    if not files or result.existing:
        return []
    added: list[AttachmentAdded] = attachments_add(
        user=user, workflow_id=result.workflow_id, files=files, request_id=request_id
    )
    return [
        {"sha256": a.sha256, "name": a.name, "size": a.size, "contentType": a.content_type}
        for a in added
    ]
