"""The request page's conversation: a comment added from the page, and the submitter's
withdrawal of a request that is still waiting (with a reason). Both go through the same
services as the API; a refusal shows the page again with what was typed kept."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected
from templates_engine.comments import COMMENT_MAX

from .. import access
from ..http.request_ids import request_id_valid
from ..models import User
from ..runtime.commands import Busy, RequestIdReused, WorkflowNotFound
from ..selectors.workflows import workflow_get_readable
from ..services.attachments import AttachmentRefused
from ..services.comments import CommentRefused, workflow_comment
from ..services.workflows import workflow_cancel
from ..web.uploads import uploads_streamed
from .common import BUSY, _member, _subject
from .files import files_checked, files_recorded
from .request import CONFIRMED, DECISION_UNREADABLE, _detail_context, withdraw_question

COMMENT_ADDED = "Your comment was added; the others on this request are told by e-mail."
COMMENT_ALREADY_ADDED = "Your comment had already been added."
WITHDRAWN = "You withdrew {subject}."
WITHDRAW_REASON_MISSING = "Say why you are withdrawing the request; nothing was changed."
WITHDRAW_REASON_MAX = 1000
WITHDRAW_REASON_TOO_LONG = (
    f"A reason holds at most {WITHDRAW_REASON_MAX:,} characters; nothing was changed."
)
WITHDRAW_REASON_NUL = "A reason may not contain a NUL character; nothing was changed."
NOT_WITHDRAWABLE = "Only the submitter may withdraw a request, and only while it waits."


def _readable(user: User, workflow_id: str) -> access.ReadableWorkflow:
    """The read rule's answer for this request, asked once and handed to the services."""
    readable = workflow_get_readable(user=user, workflow_id=workflow_id)
    if readable is None:
        raise Http404
    return readable


def _again(
    request: HttpRequest, readable: access.ReadableWorkflow, status: int, **extra: str
) -> HttpResponse:
    """The request page again, with the refusal beside the form and what was typed."""
    context = _detail_context(readable)
    context.update(extra)
    return render(request, "approvals/workflow_detail.html", context, status=status)


@login_required
@require_http_methods(["POST"])
@uploads_streamed
def workflow_comment_page(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    readable = _readable(user, workflow_id)
    wf = readable.workflow
    # The engine counts the characters; a longer post is cut a little past the limit so
    # the refusal still says how long it was, without keeping megabytes.
    text = request.POST.get("text", "")[: COMMENT_MAX * 2]
    request_id = request.POST.get("request_id", "")
    if not request_id_valid(request_id):
        return _again(request, readable, 400, comment_text=text, comment_error=DECISION_UNREADABLE)
    try:
        files = files_checked(request, workflow_id=wf.pk)
        result = None
        if text.strip() or not files:  # files alone need no words
            result = workflow_comment(
                user=user,
                workflow_id=workflow_id,
                text=text,
                request_id=request_id,
                readable=readable,
            )
    except WorkflowNotFound:
        raise Http404 from None
    except (CommandRejected, CommentRefused, AttachmentRefused) as exc:
        return _again(request, readable, 422, comment_text=text, comment_error=exc.message)
    except (access.Forbidden, RequestIdReused) as exc:
        return _again(request, readable, 403, comment_text=text, comment_error=str(exc))
    except Busy:
        return _again(request, readable, 503, comment_text=text, comment_error=BUSY)
    if result is not None:
        messages.success(request, COMMENT_ALREADY_ADDED if result.duplicate else COMMENT_ADDED)
    files_recorded(request, user, wf.pk, files, request_id, readable)
    return HttpResponseRedirect(reverse("workflow", args=[workflow_id]) + "#conversation")


@login_required
@require_http_methods(["POST"])
def workflow_withdraw_page(request: HttpRequest, workflow_id: str) -> HttpResponse:
    """The submitter withdraws a waiting request, saying why (the cancel path)."""
    user = _member(request)
    readable = _readable(user, workflow_id)
    wf = readable.workflow
    reason = request.POST.get("reason", "")[: WITHDRAW_REASON_MAX * 2]
    request_id = request.POST.get("request_id", "")
    problem = None
    if not access.may_withdraw(user, wf):
        problem = NOT_WITHDRAWABLE
    elif not request_id_valid(request_id):
        problem = DECISION_UNREADABLE
    elif "\x00" in reason:
        problem = WITHDRAW_REASON_NUL
    elif not reason.strip():
        problem = WITHDRAW_REASON_MISSING
    elif len(reason) > WITHDRAW_REASON_MAX:
        problem = WITHDRAW_REASON_TOO_LONG
    if problem == NOT_WITHDRAWABLE:  # the page shows them no form to put it beside
        messages.error(request, problem)
        return _again(request, readable, 409)
    if problem is not None:
        return _again(request, readable, 400, withdraw_reason=reason, withdraw_error=problem)
    if request.POST.get("confirmed") != CONFIRMED:  # without the page's script: a page asks
        return render(
            request,
            "approvals/withdraw_confirm.html",
            {
                "wf": wf,
                "question": withdraw_question(wf),
                "reason": reason,
                "request_id": request_id,
            },
        )
    try:
        workflow_cancel(
            user=user,
            workflow_id=workflow_id,
            reason=reason,
            request_id=request_id,
            readable=readable,
        )
    except WorkflowNotFound:
        raise Http404 from None
    except CommandRejected as exc:
        return _again(request, readable, 409, withdraw_reason=reason, withdraw_error=exc.message)
    except (access.Forbidden, RequestIdReused) as exc:
        return _again(request, readable, 403, withdraw_reason=reason, withdraw_error=str(exc))
    except Busy:
        return _again(request, readable, 503, withdraw_reason=reason, withdraw_error=BUSY)
    messages.success(request, WITHDRAWN.format(subject=_subject(wf)))
    return HttpResponseRedirect(reverse("workflow", args=[workflow_id]))
