"""Files coming in and going out over HTTP: an upload streamed to disk and cut off past
the size limit, and a stored file served as a download, never shown inline."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import IO, Any, TypeVar, cast

from django.conf import settings
from django.core.files.uploadhandler import SkipFile, TemporaryFileUploadHandler
from django.http import FileResponse, HttpRequest
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from ..selectors.attachments import Attachment, attachment_open

_View = TypeVar("_View", bound=Callable[..., HttpResponseBase])


class AttachmentUploadHandler(TemporaryFileUploadHandler):
    """Writes each file part to a temporary file as its chunks arrive (no file is ever
    held in memory, whatever its size), skips the rest of a file once it passes
    APPROVALS_FILE_MAX_BYTES (``too_large``, its name in ``cut_off``), and skips every
    file past APPROVALS_FILES_PER_UPLOAD while still counting them (``sent``)."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.limit: int = settings.APPROVALS_FILE_MAX_BYTES
        self.most: int = settings.APPROVALS_FILES_PER_UPLOAD
        self.received = 0
        self.sent = 0
        self.too_large = False
        self.cut_off: list[str] = []

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        self.sent += 1
        if self.sent > self.most:
            raise SkipFile  # refused by count: not worth writing anywhere
        super().new_file(*args, **kwargs)
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > self.limit:
            self.too_large = True
            self.cut_off.append(str(self.file_name or ""))
            raise SkipFile
        return super().receive_data_chunk(raw_data, start)


def stream_uploads(request: HttpRequest) -> AttachmentUploadHandler:
    """Install the streaming handler on ``request``, before anything reads its body
    (``request.POST``, ``request.FILES``, DRF's ``request.data``)."""
    handler = AttachmentUploadHandler(request)
    request.upload_handlers = [handler]
    return handler


def uploads_streamed(view: _View) -> _View:
    """A page view whose form may carry files: the streaming handler is installed before
    the CSRF check reads the body, and the check is then made as usual.
    ``request.attachment_upload`` is the handler."""
    protected = csrf_protect(view)

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        request.attachment_upload = stream_uploads(request)  # type: ignore[attr-defined]
        return protected(request, *args, **kwargs)

    return cast(_View, csrf_exempt(wrapped))  # checked in ``protected``


def attachment_response(attachment: Attachment, stream: IO[bytes] | None = None) -> FileResponse:
    """The file as a download with the type it was sniffed as: the browser saves it and
    never renders it in the app's origin (``nosniff``; a sandbox if it tried).
    ``stream``: the bytes from elsewhere than the requests' files (a draft's copy)."""
    response = FileResponse(
        stream if stream is not None else attachment_open(attachment),
        as_attachment=True,
        filename=attachment.name,
        content_type=attachment.content_type,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


def preview_response(stream: IO[bytes]) -> FileResponse:
    """A file's preview: a PNG this app drew itself, so it may be shown inline."""
    response = FileResponse(stream, content_type="image/png")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response
