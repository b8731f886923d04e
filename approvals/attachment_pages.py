"""The workflow page's files: the "Attach a receipt" form and the downloads."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected

from . import access
from .data_words import file_size
from .models import User
from .request_ids import request_id_valid
from .runtime.commands import BUSY, Busy, RequestIdReused, WorkflowNotFound
from .selectors.attachments import attachment_get
from .services.attachments import AttachmentRefused, attachment_add
from .web.uploads import AttachmentUploadHandler, attachment_response, stream_uploads

FORM_UNREADABLE = "The form could not be read; reload the page and attach the file again."
ATTACHED = "Attached {name} ({size})."
ALREADY_ATTACHED = " (This file had already been attached.)"


def _member(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None:
        raise Http404
    return user


@csrf_exempt  # checked below, once the streaming upload handler is in place
@login_required
@require_http_methods(["POST"])
def workflow_attach(request: HttpRequest, workflow_id: str) -> HttpResponse:
    handler = stream_uploads(request)
    return _attach(request, workflow_id, handler)


@csrf_protect
def _attach(
    request: HttpRequest, workflow_id: str, handler: AttachmentUploadHandler
) -> HttpResponse:
    user = _member(request)
    back = reverse("workflow", args=[workflow_id]) + "#files"
    request_id = request.POST.get("request_id", "")
    if not request_id_valid(request_id):
        messages.error(request, FORM_UNREADABLE)
        return HttpResponseRedirect(back)
    try:
        added = attachment_add(
            user=user,
            workflow_id=workflow_id,
            upload=request.FILES.get("file"),
            request_id=request_id,
            too_large=handler.too_large,
        )
    except WorkflowNotFound:
        raise Http404 from None
    except AttachmentRefused as exc:
        messages.error(request, exc.message)
    except CommandRejected as exc:
        messages.error(request, exc.message)
    except (access.Forbidden, RequestIdReused) as exc:
        messages.error(request, str(exc))
    except Busy:
        messages.error(request, BUSY)
    else:
        text = ATTACHED.format(name=added.name, size=file_size(added.size))
        messages.success(request, text + (ALREADY_ATTACHED if added.result.duplicate else ""))
    return HttpResponseRedirect(back)


@login_required
@require_http_methods(["GET", "HEAD"])
def workflow_file(request: HttpRequest, workflow_id: str, sha256: str) -> HttpResponseBase:
    """A file on the request, as a download, to anyone who may read the request."""
    attachment = attachment_get(user=_member(request), workflow_id=workflow_id, sha256=sha256)
    if attachment is None:
        raise Http404
    return attachment_response(attachment)
