"""The workflow page's files: the "Attach files" form, the downloads and previews, and
the pieces the other forms that carry files (a new request, a resubmission, a comment)
share: the files checked before anything is started or recorded, and recorded after."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected

from .. import access
from ..http.request_ids import request_id_valid
from ..models import Draft, DraftFile, User
from ..runtime.commands import BUSY, Busy, RequestIdReused, WorkflowNotFound
from ..selectors.attachments import (
    Attachment,
    attachment_get,
    attachment_hashes,
    preview_exists,
    preview_open,
)
from ..selectors.drafts import draft_file_get, draft_file_name
from ..selectors.workflows import workflow_get_readable
from ..services.attachments import (
    NO_FILE,
    NO_FILE_CODE,
    AttachmentAdded,
    AttachmentRefused,
    CheckedFile,
    accept_attribute,
    accepted_hint,
    attachment_add,
    attachment_storage,
    attachments_add,
    attachments_check,
)
from ..services.drafts import DraftNotFound, DraftRefused, draft_files_add
from ..web.present import Line
from ..web.uploads import (
    AttachmentUploadHandler,
    attachment_response,
    preview_response,
    uploads_streamed,
)
from ..words.data import file_size

FORM_UNREADABLE = "The form could not be read; reload the page and attach the file again."
ATTACHED = "Attached {name} ({size})."
ALREADY_ATTACHED = " (This file had already been attached.)"
ATTACHED_SEVERAL = "Attached {count} files: {names}."
NOT_ATTACHED_AFTER = "The request went ahead, but its files were not attached: {why}"
DRAFT_KEPT = "The draft keeps {names}; they go with the request when you submit it."
DRAFT_NOT_KEPT = "The draft was saved, but its new files were not kept: {why}"


def _member(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None:
        raise Http404
    return user


# -- the pieces other forms share ------------------------------------------------------


def file_field_context() -> dict[str, Any]:
    """What ``approvals/_file_field.html`` needs: the types, the limits in words."""
    return {
        "file_accept": accept_attribute(),
        "file_hint": (
            f"{accepted_hint()}, up to {file_size(settings.APPROVALS_FILE_MAX_BYTES)} each, "
            f"{settings.APPROVALS_FILES_PER_UPLOAD} at a time. Files stay with the request "
            "for good."
        ),
    }


def files_checked(
    request: HttpRequest, *, workflow_id: Any = None, already: set[str] | None = None
) -> list[CheckedFile]:
    """The files a form brought (none is fine), checked before anything is done with
    the rest of the form. Raises AttachmentRefused. ``workflow_id`` names the request
    they would join, for the count it holds already; ``already`` gives that count's
    hashes otherwise (a draft's files)."""
    handler: AttachmentUploadHandler | None = getattr(request, "attachment_upload", None)
    uploads = request.FILES.getlist("file")
    return attachments_check(
        uploads=uploads,
        sent=handler.sent if handler else None,
        cut_off=handler.cut_off if handler else (),
        already=attachment_hashes(workflow_id=workflow_id) if workflow_id else already,
    )


def _said(added: Sequence[AttachmentAdded]) -> str:
    if len(added) == 1:
        only = added[0]
        text = ATTACHED.format(name=only.name, size=file_size(only.size))
        return text + (ALREADY_ATTACHED if only.result.duplicate else "")
    names = ", ".join(f"{a.name} ({file_size(a.size)})" for a in added)
    return ATTACHED_SEVERAL.format(count=len(added), names=names)


def files_recorded(
    request: HttpRequest,
    user: User,
    workflow_id: Any,
    files: Sequence[CheckedFile],
    request_id: str | None,
    readable: access.ReadableWorkflow | None = None,
) -> None:
    """Record checked files on a request once the start, comment or resubmission they
    came with is recorded, and say so; a failure now (the request busy, say) is said
    in words, and the request stands as recorded. ``readable``: the read rule's answer
    when the page asked it already."""
    if not files:
        return
    try:
        added = attachments_add(
            user=user,
            workflow_id=workflow_id,
            files=files,
            request_id=request_id or uuid.uuid4().hex,
            readable=readable,
        )
    except (AttachmentRefused, CommandRejected) as exc:
        messages.error(request, NOT_ATTACHED_AFTER.format(why=exc.message))
    except (access.Forbidden, RequestIdReused, WorkflowNotFound) as exc:
        messages.error(request, NOT_ATTACHED_AFTER.format(why=str(exc)))
    except Busy:
        messages.error(request, NOT_ATTACHED_AFTER.format(why=BUSY))
    else:
        messages.success(request, _said(added))


def draft_files_kept(
    request: HttpRequest, user: User, draft: Draft, files: Sequence[CheckedFile]
) -> None:
    """Keep the checked files a draft's form brought with the draft just saved, and say
    so; a refusal now (the draft full, submitted or deleted in another tab meanwhile)
    is said in words, and the draft stands as saved."""
    if not files:
        return
    try:
        added = draft_files_add(author=user, draft_id=draft.pk, files=files)
    except DraftRefused as exc:
        messages.error(request, DRAFT_NOT_KEPT.format(why=exc.message))
    except DraftNotFound as exc:
        messages.error(request, DRAFT_NOT_KEPT.format(why=str(exc)))
    else:
        if added:
            names = ", ".join(f"{f.name} ({file_size(f.size)})" for f in added)
            messages.success(request, DRAFT_KEPT.format(names=names))


def draft_file_row(file: DraftFile) -> dict[str, str]:
    """One file a draft keeps, as its form lists it."""
    return {
        "name": file.name,
        "size": file_size(file.size),
        "url": reverse("draft-file", args=[file.draft_id, file.sha256]),
    }


@dataclass(frozen=True)
class FileRow:
    """One file on the request page's Files card."""

    line: Line
    preview: bool


def files_card(lines: Sequence[Line]) -> list[FileRow]:
    """The timeline's file lines, each saying whether it has a preview to show."""
    return [FileRow(line, preview_exists(line.file)) for line in lines if line.file]


# -- the views -------------------------------------------------------------------------


@login_required
@require_http_methods(["POST"])
@uploads_streamed
def workflow_attach(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    readable = workflow_get_readable(user=user, workflow_id=workflow_id)
    if readable is None:
        raise Http404
    back = reverse("workflow", args=[workflow_id]) + "#files"
    request_id = request.POST.get("request_id", "")
    if not request_id_valid(request_id):
        messages.error(request, FORM_UNREADABLE)
        return HttpResponseRedirect(back)
    handler: AttachmentUploadHandler = request.attachment_upload  # type: ignore[attr-defined]
    uploads = request.FILES.getlist("file")
    try:
        if len(uploads) == 1 and handler.sent == 1:  # one file: its own request id
            added = [
                attachment_add(
                    user=user,
                    workflow_id=workflow_id,
                    upload=uploads[0],
                    request_id=request_id,
                    readable=readable,
                )
            ]
        else:
            if not uploads and not handler.cut_off:
                raise AttachmentRefused(NO_FILE_CODE, NO_FILE)
            files = files_checked(request, workflow_id=workflow_id)
            added = attachments_add(
                user=user,
                workflow_id=workflow_id,
                files=files,
                request_id=request_id,
                readable=readable,
            )
    except WorkflowNotFound:
        raise Http404 from None
    except (AttachmentRefused, CommandRejected) as exc:
        messages.error(request, exc.message)
    except (access.Forbidden, RequestIdReused) as exc:
        messages.error(request, str(exc))
    except Busy:
        messages.error(request, BUSY)
    else:
        messages.success(request, _said(added))
    return HttpResponseRedirect(back)


@login_required
@require_http_methods(["GET", "HEAD"])
def workflow_file(request: HttpRequest, workflow_id: str, sha256: str) -> HttpResponseBase:
    """A file on the request, as a download, to anyone who may read the request."""
    attachment = attachment_get(user=_member(request), workflow_id=workflow_id, sha256=sha256)
    if attachment is None:
        raise Http404
    return attachment_response(attachment)


@login_required
@require_http_methods(["GET", "HEAD"])
def workflow_file_preview(request: HttpRequest, workflow_id: str, sha256: str) -> HttpResponseBase:
    """A file's preview image, to anyone who may read the request; 404 when it has none."""
    attachment = attachment_get(user=_member(request), workflow_id=workflow_id, sha256=sha256)
    stream = preview_open(attachment) if attachment is not None else None
    if stream is None:
        raise Http404
    return preview_response(stream)


@login_required
@require_http_methods(["GET", "HEAD"])
def draft_file(request: HttpRequest, draft_id: str, sha256: str) -> HttpResponseBase:
    """A file a draft keeps, as a download, to the draft's author alone (anyone else:
    404, as for the draft itself)."""
    kept = draft_file_get(user=_member(request), draft_id=draft_id, sha256=sha256)
    if kept is None:
        raise Http404
    stream = attachment_storage().open(draft_file_name(kept.draft_id, kept.sha256), "rb")
    attachment = Attachment(kept.sha256, kept.name, kept.size, kept.content_type)
    return attachment_response(attachment, stream)
