"""One request: the workflow page with its history and diagram, deciding a task, and
resubmitting a request sent back. How things read to people lives in
approvals.web.present."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from templates_engine import SUBMITTER_STEP, CommandRejected
from templates_engine import errors as engine_errors
from templates_engine.steps.approval import HANDOVER_NOTE_MAX, REASON_REQUIRED, TURNING_BACK

from .. import access
from ..audit.archived import workflow_archived
from ..http.request_ids import request_id_valid
from ..models import HeldDecision, User, Workflow
from ..runtime.commands import Busy, CommandResult, RequestIdReused, WorkflowNotFound
from ..selectors.departments import department_choices, lists_of
from ..selectors.held import held_open
from ..selectors.standing_in import stands_in_for
from ..selectors.workflows import workflow_get_readable, workflow_restart_links
from ..services.attachments import AttachmentRefused
from ..services.held_decisions import (
    HOLDABLE,
    HoldRefused,
    decision_hold,
    held_by_another_refuse,
)
from ..services.workflows import (
    workflow_decide,
)
from ..web import present
from ..web.forms import SchemaForm
from ..web.refusals import REJECTION_TEXT, refusal_text
from ..web.story import workflow_story
from ..web.uploads import uploads_streamed
from ..words.decisions import DECISIONS as OUTCOME_DECISIONS
from ..words.decisions import outcome_at, step_outcomes
from .common import (
    BUSY,
    REASON_TEXTS,
    _answer,
    _awaits_changes_from,
    _member,
    _names,
    _raw,
    _reason_required,
    _requester,
    _schema,
    _subject,
    _wants_json,
)
from .files import (
    file_field_context,
    files_card,
    files_checked,
    files_recorded,
)
from .held import done_message, held_answer, held_context

DECISIONS = (*OUTCOME_DECISIONS, "delegate")


COMMENT_NUL = "The comment may not contain a NUL character; nothing was recorded."


DELEGATE_NUL = "A colleague's name has no NUL character in it; nothing was recorded."


DECISION_UNREADABLE = "That decision could not be read; please try again."


WITHDRAW_HERE = (
    "To withdraw the request, say why under “Withdraw your request”; nothing was recorded."
)


DELEGATE_MISSING = "Choose the colleague to hand this task to."


NOT_SENT_BACK = "This request is not waiting for your changes."


# A rejection is confirmed first: the inbox's script asks in a dialog and sends
# ``confirmed=yes``; a plain form post gets a confirmation page.
CONFIRMED = "yes"


def decision_words(wf: Workflow, step: str, requester: str) -> dict[str, Any]:
    """What the decision forms of ``wf`` at ``step`` need: each decision offered, named
    for what the workflow template will record; the rejection's question naming the
    request and saying what the rejection does, whether it is asked at all (a
    rejection that ends the request); and the amount the bulk approval adds up."""
    raw, schema = _raw(wf.template), _schema(wf.template)
    figures = present.key_figures(schema, wf.data)
    amount = present.main_amount(schema, wf.data)
    rejection = outcome_at(raw, step, "reject", requester=requester)
    return {
        "outcomes": step_outcomes(raw, step, requester=requester),
        "question": present.reject_question(_subject(wf), requester, figures, rejection),
        "ask_first": rejection.ends,
        "amount_minor": amount[0] if amount else "",
        "currency": amount[1] if amount else "",
    }


def withdraw_question(wf: Workflow) -> str:
    """``Withdraw Expense claim R-8? It stops for good and cannot be resubmitted.``"""
    withdrawal = outcome_at(None, SUBMITTER_STEP, "reject", requester="")
    return withdrawal.question_words(_subject(wf))


def _detail_context(readable: access.ReadableWorkflow) -> dict[str, Any]:
    """The request page's context, for a reader the read rule let read it."""
    user, wf = readable.user, readable.workflow
    told = workflow_story(wf)
    history, assignees, names, lines = told.history, told.assignees, told.names, told.timeline
    # an archived request is read from the archive store and changes no more
    archived = workflow_archived(tenant_id=wf.tenant_id, workflow_id=wf.pk)
    held = next((a for a in assignees if a["user"] == user.username), None)
    mine = held is not None
    stand_in = "" if mine else stands_in_for(user, [a["user"] or "" for a in assignees])
    held_for = (held or {}).get("onBehalfOf") or stand_in  # "for Bob"
    departments = department_choices(tenant_id=wf.tenant_id)
    return {
        "wf": wf,
        "subject": _subject(wf),
        "status_label": told.status_label,
        "status_sentence": told.status_sentence,
        "data_rows": present.data_rows(_schema(wf.template), wf.data, lists_of(departments)),
        "conversion": told.conversion,
        "timeline": lines,
        "files": files_card(lines),
        "archived": archived.words if archived is not None else "",
        "may_attach": archived is None and access.may_attach(readable),
        "attach_request_id": uuid.uuid4().hex,
        **file_field_context(),
        "sent_back_note": present.sent_back_note(history, told.ctx),
        "may_comment": archived is None and access.may_comment(readable),
        "comment_request_id": uuid.uuid4().hex,
        "may_withdraw": archived is None and access.may_withdraw(user, wf),
        "withdraw_question": withdraw_question(wf),
        "withdraw_request_id": uuid.uuid4().hex,
        "restart": workflow_restart_links(history=history),
        "diagram": told.diagram,
        "submitted": present.when(wf.created_at),
        "submitter_name": told.submitter_name,
        "mine": mine or bool(stand_in),
        # a task of someone out of office whom ``user`` decides for now ("for Bob")
        "for_user": stand_in,
        "for_name": present.person(held_for, names) if held_for else "",
        "handover_note_max": HANDOVER_NOTE_MAX,
        "sent_back": _awaits_changes_from(user, wf),
        # the form to resubmit, for a request that waits for ``user``'s changes
        "form": (
            SchemaForm(
                _schema(wf.template),
                initial=wf.data,
                with_reference=False,
                departments=departments,
            )
            if _awaits_changes_from(user, wf)
            else None
        ),
        "request_id": uuid.uuid4().hex,
        "reason_required": _reason_required(wf, wf.current_step),
        "reason_texts": REASON_TEXTS,
        **decision_words(wf, wf.current_step, _requester(wf)),
        # a decision held for its undo window: the holder's Undo, or who is deciding
        "held": held_context(user, _held_on(user, wf), _subject(wf)),
    }


def _held_on(user: User, wf: Workflow) -> HeldDecision | None:
    return held_open(tenant_id=user.member_tenant_id, workflow_ids=[wf.pk]).get(str(wf.pk))


@login_required
def workflow_detail(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    readable = workflow_get_readable(user=user, workflow_id=workflow_id)
    if readable is None:
        raise Http404
    context = _detail_context(readable)
    return render(request, "approvals/workflow_detail.html", context)


@login_required
@require_http_methods(["POST"])
def decide(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    decision = request.POST.get("decision", "")
    request_id = request.POST.get("request_id", "")
    comment = request.POST.get("comment", "")[:4000]
    delegate_to = request.POST.get("delegate_to", "").strip() or None
    # a task of someone out of office whom ``user`` stands in for (the inbox's "for Bob")
    on_behalf_of = request.POST.get("on_behalf_of", "").strip()[:150] or None
    back = request.POST.get("next") or reverse("workflow", args=[workflow_id])
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("inbox")  # never bounce to another site
    if decision not in DECISIONS or not request_id_valid(request_id):
        return _answer(request, back, ok=False, message=DECISION_UNREADABLE, code=400)
    if decision == "delegate" and not delegate_to:
        return _answer(request, back, ok=False, message=DELEGATE_MISSING, code=400)
    if "\x00" in comment:  # the database cannot keep a NUL in text
        return _answer(request, back, ok=False, message=COMMENT_NUL, code=400)
    if delegate_to is not None and "\x00" in delegate_to:
        return _answer(request, back, ok=False, message=DELEGATE_NUL, code=400)
    if on_behalf_of is not None and "\x00" in on_behalf_of:
        return _answer(request, back, ok=False, message=DECISION_UNREADABLE, code=400)
    turning_back = decision in TURNING_BACK
    # The read rule asked here (a turning back shows its question first) is handed on
    # to the service; otherwise the service asks it, once, with the lock.
    readable = workflow_get_readable(user=user, workflow_id=workflow_id) if turning_back else None
    before = readable.workflow if readable is not None else None
    if decision in TURNING_BACK and before is not None:
        asked = _turning_back_asks(request, before, decision, comment, back)
        if asked is not None:
            return asked
    holding = request.POST.get("hold") == "yes" and decision in HOLDABLE
    result: CommandResult | HeldDecision
    try:
        if holding:
            result = decision_hold(
                user=user,
                workflow_id=workflow_id,
                decision=decision,
                request_id=request_id,
                comment=comment,
                on_behalf_of=on_behalf_of,
            )
        else:
            held_by_another_refuse(user, workflow_id)
            result = workflow_decide(
                user=user,
                workflow_id=workflow_id,
                decision=decision,
                request_id=request_id,
                comment=comment,
                on_behalf_of=on_behalf_of,
                delegate_to=delegate_to if decision == "delegate" else None,
                readable=readable,
            )
    except HoldRefused as exc:
        return _answer(request, back, ok=False, message=exc.message, code=409)
    except WorkflowNotFound:
        raise Http404 from None  # unknown, or another organisation's: the same answer
    except CommandRejected as exc:
        colleague = present.person(delegate_to, _names(user, [delegate_to])) if delegate_to else ""
        text = refusal_text(exc, decision=decision, colleague=colleague)
        turned_down = (engine_errors.REASON_REQUIRED, engine_errors.INVALID_COMMENT)
        code = 422 if exc.code in turned_down else 409
        return _answer(request, back, ok=False, message=text, code=code)
    except (access.Forbidden, RequestIdReused) as exc:
        return _answer(request, back, ok=False, message=str(exc), code=403)
    except Busy:
        return _answer(request, back, ok=False, message=BUSY, code=503)
    if isinstance(result, HeldDecision):
        return held_answer(request, result, back)
    message = done_message(user, workflow_id, decision, delegate_to, before=before)
    if result.duplicate:
        message += " (This decision had already been recorded.)"
    return _answer(request, back, ok=True, message=message, code=200, status=result.status)


def _turning_back_asks(
    request: HttpRequest, wf: Workflow, decision: str, comment: str, back: str
) -> HttpResponse | None:
    """Before a rejection or a send-back is sent: refused at once without the reason its
    step asks for (the engine refuses it too), and a rejection that ends the request,
    not yet confirmed, asks first, naming the request. None when the decision may go
    ahead."""
    if not comment.strip() and _reason_required(wf, wf.current_step):
        text = REASON_REQUIRED.format(decision=TURNING_BACK[decision])
        return _answer(request, back, ok=False, message=text, code=422)
    if decision != "reject" or request.POST.get("confirmed") == CONFIRMED:
        return None
    words = decision_words(wf, wf.current_step, _requester(wf))
    if not words["ask_first"]:
        return None
    question = words["question"]
    if _wants_json(request):
        return JsonResponse({"ok": False, "message": question, "confirm": True}, status=409)
    context = {
        "wf": wf,
        "question": question,
        "label": next(o.label for o in words["outcomes"] if o.decision == "reject"),
        "comment": comment,
        "request_id": request.POST.get("request_id", ""),
        "back": back,
        "hold": request.POST.get("hold") == "yes",
    }
    return render(request, "approvals/decide_confirm.html", context)


@login_required
@require_http_methods(["POST"])
@uploads_streamed
def workflow_resubmit(request: HttpRequest, workflow_id: str) -> HttpResponse:
    """The submitter answers a send-back with changed data (or withdraws)."""
    user = _member(request)
    readable = workflow_get_readable(user=user, workflow_id=workflow_id)
    if readable is None:
        raise Http404
    wf = readable.workflow
    if not _awaits_changes_from(user, wf):
        context = _detail_context(readable)
        messages.error(request, NOT_SENT_BACK)
        return render(request, "approvals/workflow_detail.html", context, status=409)
    request_id = request.POST.get("request_id", "")
    form = SchemaForm(
        _schema(wf.template),
        request.POST,
        with_reference=False,
        departments=department_choices(tenant_id=wf.tenant_id),
    )
    if request.POST.get("decision") == "reject":  # a withdrawal asks a reason, and first
        form.add_error(None, WITHDRAW_HERE)
    elif not request_id_valid(request_id):
        form.add_error(None, DECISION_UNREADABLE)
    comment_nul = "\x00" in request.POST.get("comment", "")
    if comment_nul:
        form.add_error(None, COMMENT_NUL)
    if not comment_nul and form.is_valid():
        try:
            files = files_checked(request, workflow_id=workflow_id)
            workflow_decide(
                user=user,
                workflow_id=workflow_id,
                decision="approve",
                request_id=request_id,
                comment=request.POST.get("comment", "")[:4000],
                data=form.data_for_engine(),
                readable=readable,
            )
        except WorkflowNotFound:
            raise Http404 from None
        except (CommandRejected, AttachmentRefused) as exc:
            form.add_error(None, REJECTION_TEXT.get(exc.code, exc.message))
        except (access.Forbidden, RequestIdReused) as exc:
            form.add_error(None, str(exc))
        except Busy:
            form.add_error(None, BUSY)
        else:
            messages.success(request, f"Resubmitted {_subject(wf)}.")
            files_recorded(request, user, workflow_id, files, request_id, readable)
            return HttpResponseRedirect(reverse("workflow", args=[workflow_id]))
    context = _detail_context(readable)
    context["form"] = form
    return render(request, "approvals/workflow_detail.html", context, status=400)
