"""Files coming in and going out over HTTP: an upload streamed to disk and cut off past
the size limit, and a stored file served as a download, never shown inline."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.files.uploadhandler import SkipFile, TemporaryFileUploadHandler
from django.http import FileResponse, HttpRequest

from ..selectors.attachments import Attachment, attachment_open


class AttachmentUploadHandler(TemporaryFileUploadHandler):
    """Writes each file part to a temporary file as its chunks arrive (no file is ever
    held in memory, whatever its size), and skips the rest of a file once it passes
    APPROVALS_FILE_MAX_BYTES, saying so in ``too_large``."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.limit: int = settings.APPROVALS_FILE_MAX_BYTES
        self.received = 0
        self.too_large = False

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.too_large = True
            raise SkipFile
        return super().receive_data_chunk(raw_data, start)


def stream_uploads(request: HttpRequest) -> AttachmentUploadHandler:
    """Install the streaming handler on ``request``, before anything reads its body
    (``request.POST``, ``request.FILES``, DRF's ``request.data``)."""
    handler = AttachmentUploadHandler(request)
    request.upload_handlers = [handler]
    return handler


def attachment_response(attachment: Attachment) -> FileResponse:
    """The file as a download with the type it was sniffed as: the browser saves it and
    never renders it in the app's origin (``nosniff``; a sandbox if it tried)."""
    response = FileResponse(
        attachment_open(attachment),
        as_attachment=True,
        filename=attachment.name,
        content_type=attachment.content_type,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response
