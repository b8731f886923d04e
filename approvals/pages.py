"""Server-rendered pages: the inbox, a workflow with its history and diagram, the start
and resubmission forms, out of office and search. Views parse the form, call one service
or selector, and render; how things read to people lives in approvals.web.present."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected, Definition
from templates_engine import errors as engine_errors
from templates_engine.steps.approval import HANDOVER_NOTE_MAX, REASON_REQUIRED, TURNING_BACK

from . import access
from .attachment_pages import (
    draft_file_row,
    draft_files_kept,
    file_field_context,
    files_card,
    files_checked,
    files_recorded,
)
from .decisions import DECISION_LABELS, DECISION_RECORDED
from .definitions import definition_for, raw_definition_for
from .models import Delegation, Draft, User, Workflow, WorkflowTemplate
from .request_ids import request_id_valid
from .runtime.commands import Busy, RequestIdReused, WorkflowNotFound
from .selectors.drafts import draft_files, draft_get, drafts_of
from .selectors.inbox_lists import InboxFilter, inbox_kinds, inbox_listing, requests_of
from .selectors.people import colleagues_matching
from .selectors.standing_in import stands_in_for
from .selectors.tasks import BadCursor
from .selectors.templates import workflow_templates_latest
from .selectors.workflows import (
    workflow_get,
    workflow_restart_links,
)
from .services.attachments import AttachmentRefused
from .services.delegations import DelegationRefused, delegation_set
from .services.drafts import (
    DraftNotFound,
    DraftRefused,
    draft_save,
    draft_submit,
    draft_update,
)
from .services.workflows import (
    IDEMPOTENCY_KEY_INVALID,
    IdempotencyKeyReused,
    StartResult,
    SubjectTaken,
    TemplateNotFound,
    idempotency_key_valid,
    workflow_decide,
    workflow_start,
)
from .web import inbox_lists as lists
from .web import inbox_page, present, search_results
from .web import search as search_page
from .web.forms import BoundedDateField, SchemaForm
from .web.hand_over import hand_over_said, standing_in_marks
from .web.refusals import REJECTION_TEXT, refusal_text
from .web.search import PAGE_SIZE, WorkflowSearch
from .web.story import workflow_story
from .web.uploads import uploads_streamed

DECISIONS = (*DECISION_LABELS, "delegate")
COMMENT_NUL = "The comment may not contain a NUL character; nothing was recorded."
DELEGATE_NUL = "A colleague's name has no NUL character in it; nothing was recorded."
DONE_WORDS = {**DECISION_RECORDED, "delegate": "Handed on"}
DECISION_UNREADABLE = "That decision could not be read; please try again."
DELEGATE_MISSING = "Choose the colleague to hand this task to."
NO_SUCH_COLLEAGUE = "Choose a colleague from your organisation."
NOT_SENT_BACK = "This request is not waiting for your changes."
BUSY = "The workflow is busy; please try again."
# A rejection is confirmed first: the inbox's script asks in a dialog and sends
# ``confirmed=yes``; a plain form post gets a confirmation page.
CONFIRMED = "yes"
# How long the inbox holds a decision, with an Undo, before it sends it.
UNDO_SECONDS = 8
REASON_TEXTS = {d: REASON_REQUIRED.format(decision=words) for d, words in TURNING_BACK.items()}


def _member(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None:
        raise Http404
    return user


def _names(user: User, usernames: Iterable[str | None]) -> dict[str, str]:
    """Usernames -> first names (the username when none), in one query."""
    wanted = {u for u in usernames if u}
    if not wanted:
        return {}
    rows = User.objects.filter(tenant_id=user.member_tenant_id, username__in=wanted).values_list(
        "username", "first_name"
    )
    return {u: first or u for u, first in rows}


def _raw(template: WorkflowTemplate) -> Mapping[str, Any]:
    return template.definition if isinstance(template.definition, Mapping) else {}


def _cached_schema(template_id: int) -> Mapping[str, Any] | None:
    schema = raw_definition_for(template_id).get("schema")
    return schema if isinstance(schema, Mapping) else None


def _schema(template: WorkflowTemplate) -> Mapping[str, Any] | None:
    schema = _raw(template).get("schema")
    return schema if isinstance(schema, Mapping) else None


def _subject(wf: Workflow) -> str:
    return f"{wf.template.title} {wf.subject_id}"


def _reason_required(wf: Workflow, step: str | None) -> bool:
    """Whether ``step`` asks a reason to reject or send back (the engine refuses the
    decision without one; the page says so before it is sent)."""
    definition = definition_for(wf.template_id)
    if not step or step not in {s.id for s in definition.steps}:
        return True
    return bool(getattr(definition.step(step), "reason_required", True))


def _decision_words(wf: Workflow, requester: str) -> dict[str, Any]:
    """What the decision forms need to ask before they record: the rejection's
    question naming the request, and the amount the bulk approval adds up."""
    figures = present.key_figures(_schema(wf.template), wf.data)
    amount = present.main_amount(_schema(wf.template), wf.data)
    return {
        "question": present.reject_question(_subject(wf), requester, figures),
        "amount_minor": amount[0] if amount else "",
        "currency": amount[1] if amount else "",
    }


def _query_without(request: HttpRequest, *names: str) -> str:
    """The page's query string without ``names``, for links that keep the rest."""
    params = request.GET.copy()
    for name in names:
        params.pop(name, None)
    return params.urlencode()


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    now = timezone.now()
    catalogue = inbox_kinds(user)
    chosen, number, notes = lists.read_inbox_filter(request.GET, catalogue[0])
    try:
        page = inbox_listing(
            user=user,
            filters=chosen,
            now=now,
            cursor=request.GET.get("cursor"),
            page=number,
            catalogue=catalogue,
        )
    except BadCursor:
        return HttpResponseRedirect(reverse("inbox"))
    names = _names(user, [u for t in page.tasks for u in (t.on_behalf_of, t.handed_on_from)])
    others = lists.others_asked(user, page.tasks)
    resubmitted = lists.resubmissions(t.workflow for t in page.tasks)
    away = standing_in_marks(user, page.tasks)  # "for Bob", and hand-over notes
    constants = {
        **inbox_page.page_constants(request),
        "reason_texts": REASON_TEXTS,
        "handover_note_max": HANDOVER_NOTE_MAX,
    }
    forms = inbox_page.RowForms(constants)
    rows = []
    for t in page.tasks:
        wf = t.workflow
        submitter = wf.submitter
        subject, schema = _subject(wf), _schema(wf.template)
        figures = present.key_figures(schema, wf.data)
        amount = present.main_amount(schema, wf.data)
        requester = (submitter.first_name or submitter.username) if submitter else ""
        behalf = present.person(t.on_behalf_of, names) if t.on_behalf_of else ""
        url, decide_url = inbox_page.workflow_links(t.workflow_id)
        row = {
            "pk": t.pk,
            "url": url,
            "decide_url": decide_url,
            "since_iso": inbox_page.iso(t.created_at),
            "due_iso": inbox_page.iso(t.due_at),
            "waiting": lists.age(t.created_at, now),
            "since": present.when(t.created_at),
            "waits_on": lists.inbox_waits_on(others.get((str(wf.pk), t.step), [])),
            "resubmission": resubmitted.get(str(wf.pk)),
            "task": t,
            "wf": wf,
            "request_id": uuid.uuid4().hex,
            "subject": subject,
            "summary": wf.summary if wf.summary != subject else "",
            "requester": requester,
            "figures": figures,
            "step": present.step_title(_raw(wf.template), t.step),
            "behalf": behalf,
            "handed_on": present.handed_on(t.handed_on_from, names),
            "due": present.when(t.due_at),
            "overdue": t.due_at < now,
            "resubmit": submitter is not None and submitter.pk == user.pk,
            "reason_required": _reason_required(wf, t.step),
            # what the decision forms ask before they record (as _decision_words)
            "question": present.reject_question(subject, requester, figures),
            "amount_minor": amount[0] if amount else "",
            "currency": amount[1] if amount else "",
            "for_user": "",
            **away.get(t.pk, {}),
        }
        row["forms"] = forms(row)
        rows.append(row)
    return render(
        request,
        "approvals/inbox.html",
        {
            "rows": rows,
            "next_cursor": page.next_cursor,
            "listing": page,
            "chosen": chosen,
            "notes": notes,
            "sorts": lists.SORT_LABELS,
            "filtered": chosen != InboxFilter(sort=chosen.sort),
            "query": _query_without(request, "page", "cursor"),
            "decisions": DECISION_LABELS,
            "money": present.money_parts({str(r["currency"]) for r in rows if r["currency"]}),
            "undo_seconds": UNDO_SECONDS,
            "done_words": DECISION_RECORDED,
            **constants,
        },
    )


def _workflow_rows(user: User, workflows: list[Workflow]) -> list[dict[str, Any]]:
    """Each row as My requests and the search list it. A workflow template version's
    definition is read from the process's cache (it never changes), so the rows need
    not carry it (the search reads only ``web.search.PAGE_COLUMNS``)."""
    return [
        {
            "wf": wf,
            "subject": _subject(wf),
            "status": present.status_label(wf.public_status, raw_definition_for(wf.template_id)),
            "figures": present.key_figures(_cached_schema(wf.template_id), wf.data),
            "submitted": present.when(wf.created_at),
            "submitter": (wf.submitter.first_name or wf.submitter.username) if wf.submitter else "",
            "sent_back": _awaits_changes_from(user, wf),
        }
        for wf in workflows
    ]


def _draft_rows(user: User) -> list[dict[str, Any]]:
    """The person's drafts, as My requests lists them above what they submitted."""
    templates = {t.key: t for t in workflow_templates_latest(tenant_id=user.member_tenant_id)}
    rows = []
    for draft in drafts_of(user=user):
        template = templates.get(draft.template_key)
        title = template.title if template else present.humanise(draft.template_key)
        rows.append(
            {
                "draft": draft,
                "subject": f"{title} {draft.subject_id}".strip(),
                "figures": present.key_figures(_schema(template), draft.data) if template else "",
                "saved": present.when(draft.updated_at),
                "edit": f"{reverse('workflow-new')}?template={draft.template_key}&draft={draft.pk}",
            }
        )
    return rows


@login_required
def my_workflows(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    kinds, _ = inbox_kinds(user)
    notes: list[str] = []
    status = lists.read_status(request.GET, notes)
    kind = lists.kind_of(request.GET, kinds, notes)
    statuses = lists.STATUS_FILTERS[status][1] if status else ()
    rows = requests_of(user=user, statuses=statuses, kind=kind, limit=100)
    waits = lists.waiting_on(user, rows)
    now = timezone.now()
    table = [
        {
            **row,
            "waits_on": waits.get(str(row["wf"].pk), ""),
            "age": lists.age(row["wf"].created_at, now),
        }
        for row in _workflow_rows(user, rows)
    ]
    return render(
        request,
        "approvals/my_workflows.html",
        {
            "rows": table,
            "drafts": _draft_rows(user),
            "kinds": kinds,
            "statuses": {k: words for k, (words, _) in lists.STATUS_FILTERS.items()},
            "chosen_status": status,
            "chosen_kind": kind,
            "filtered": bool(status or kind),
            "notes": notes,
        },
    )


def _awaits_changes_from(user: User, wf: Workflow) -> bool:
    """The workflow was sent back and waits for ``user``, its submitter, alone. (The
    snapshot keeps ``resubmit_step`` after a resubmission: who is asked is what says.)
    A row read without its snapshot carries those two keys as ``resubmit_step`` and
    ``asked`` (web.search)."""
    if wf.submitter_id != user.pk or wf.status != "RUNNING":
        return False
    if hasattr(wf, "asked"):
        step, assignments = getattr(wf, "resubmit_step", None), wf.asked
    else:
        step, assignments = wf.snapshot.get("resubmit_step"), wf.snapshot.get("assignments")
    if not step:
        return False
    asked = [a.get("user") for a in assignments or [] if isinstance(a, Mapping)]
    return asked == [user.username]


def _detail_context(user: User, wf: Workflow) -> dict[str, Any]:
    told = workflow_story(wf)
    history, assignees, names, lines = told.history, told.assignees, told.names, told.timeline
    held = next((a for a in assignees if a["user"] == user.username), None)
    mine = held is not None
    stand_in = "" if mine else stands_in_for(user, [a["user"] or "" for a in assignees])
    held_for = (held or {}).get("onBehalfOf") or stand_in  # "for Bob"
    return {
        "wf": wf,
        "subject": _subject(wf),
        "status_label": told.status_label,
        "status_sentence": told.status_sentence,
        "data_rows": present.data_rows(_schema(wf.template), wf.data),
        "timeline": lines,
        "files": files_card(lines),
        "may_attach": access.may_attach(user, wf),
        "attach_request_id": uuid.uuid4().hex,
        **file_field_context(),
        "sent_back_note": present.sent_back_note(history, told.ctx),
        "may_comment": access.may_comment(user, wf),
        "comment_request_id": uuid.uuid4().hex,
        "may_withdraw": access.may_withdraw(user, wf),
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
        "request_id": uuid.uuid4().hex,
        "decisions": DECISION_LABELS,
        "reason_required": _reason_required(wf, wf.current_step),
        "reason_texts": REASON_TEXTS,
        **_decision_words(wf, told.submitter_name),
    }


@login_required
def workflow_detail(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    wf = workflow_get(user=user, workflow_id=workflow_id)
    if wf is None:
        raise Http404
    context = _detail_context(user, wf)
    if context["sent_back"]:
        context["form"] = SchemaForm(_schema(wf.template), initial=wf.data, with_reference=False)
    return render(request, "approvals/workflow_detail.html", context)


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _answer(
    request: HttpRequest, back: str, *, ok: bool, message: str, code: int, status: str = ""
) -> HttpResponse:
    """For the inbox's script a JSON answer; for a plain form post a message and a
    redirect."""
    if _wants_json(request):
        return JsonResponse({"ok": ok, "message": message, "status": status}, status=code)
    (messages.success if ok else messages.error)(request, message)
    return HttpResponseRedirect(back)


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
    if decision in TURNING_BACK:
        asked = _turning_back_asks(request, user, workflow_id, decision, comment, back)
        if asked is not None:
            return asked
    try:
        result = workflow_decide(
            user=user,
            workflow_id=workflow_id,
            decision=decision,
            request_id=request_id,
            comment=comment,
            on_behalf_of=on_behalf_of,
            delegate_to=delegate_to if decision == "delegate" else None,
        )
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
    wf = workflow_get(user=user, workflow_id=workflow_id)
    what = _subject(wf) if wf is not None else "the request"
    if decision == "delegate":
        names = _names(user, [delegate_to])
        message = f"{what} was handed to {present.person(delegate_to, names)}."
    else:
        message = f"{DONE_WORDS[decision]} {what}."
        if wf is not None:
            step = present.step_title(_raw(wf.template), wf.current_step)
            then = present.next_phrase(status=wf.status, step_title=step, step=wf.current_step)
            message += " " + then
    if result.duplicate:
        message += " (This decision had already been recorded.)"
    return _answer(request, back, ok=True, message=message, code=200, status=result.status)


def _turning_back_asks(
    request: HttpRequest, user: User, workflow_id: str, decision: str, comment: str, back: str
) -> HttpResponse | None:
    """Before a rejection or a send-back is sent: refused at once without the reason its
    step asks for (the engine refuses it too), and a rejection not yet confirmed asks
    first, naming the request. None when the decision may go ahead."""
    wf = workflow_get(user=user, workflow_id=workflow_id)
    if wf is None:
        return None  # the service answers as for any decision
    if not comment.strip() and _reason_required(wf, wf.current_step):
        text = REASON_REQUIRED.format(decision=TURNING_BACK[decision])
        return _answer(request, back, ok=False, message=text, code=422)
    if decision != "reject" or request.POST.get("confirmed") == CONFIRMED:
        return None
    submitter = wf.submitter
    requester = (submitter.first_name or submitter.username) if submitter else ""
    question = _decision_words(wf, requester)["question"]
    if _wants_json(request):
        return JsonResponse({"ok": False, "message": question, "confirm": True}, status=409)
    context = {
        "wf": wf,
        "question": question,
        "comment": comment,
        "request_id": request.POST.get("request_id", ""),
        "back": back,
    }
    return render(request, "approvals/decide_confirm.html", context)


@login_required
@require_http_methods(["POST"])
@uploads_streamed
def workflow_resubmit(request: HttpRequest, workflow_id: str) -> HttpResponse:
    """The submitter answers a send-back with changed data (or withdraws)."""
    user = _member(request)
    wf = workflow_get(user=user, workflow_id=workflow_id)
    if wf is None:
        raise Http404
    if not _awaits_changes_from(user, wf):
        context = _detail_context(user, wf)
        messages.error(request, NOT_SENT_BACK)
        return render(request, "approvals/workflow_detail.html", context, status=409)
    request_id = request.POST.get("request_id", "")
    withdraw = request.POST.get("decision") == "reject"
    form = SchemaForm(_schema(wf.template), request.POST, with_reference=False)
    if not request_id_valid(request_id):
        form.add_error(None, DECISION_UNREADABLE)
    comment_nul = "\x00" in request.POST.get("comment", "")
    if comment_nul:
        form.add_error(None, COMMENT_NUL)
    if not comment_nul and (withdraw or form.is_valid()):
        try:
            files = [] if withdraw else files_checked(request, workflow_id=workflow_id)
            workflow_decide(
                user=user,
                workflow_id=workflow_id,
                decision="reject" if withdraw else "approve",
                request_id=request_id,
                comment=request.POST.get("comment", "")[:4000],
                data=None if withdraw else form.data_for_engine(),
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
            messages.success(
                request, f"{'Withdrew' if withdraw else 'Resubmitted'} {_subject(wf)}."
            )
            files_recorded(request, user, workflow_id, files, request_id)
            return HttpResponseRedirect(reverse("workflow", args=[workflow_id]))
    context = _detail_context(user, wf)
    context["form"] = form
    return render(request, "approvals/workflow_detail.html", context, status=400)


def _latest_templates(user: User) -> list[WorkflowTemplate]:
    templates = workflow_templates_latest(tenant_id=user.member_tenant_id)
    return [t for t in templates if access.may_start(user, t.key)]


@login_required
@require_http_methods(["GET", "POST"])
@uploads_streamed
def workflow_new(request: HttpRequest) -> HttpResponse:
    """The new-request form; with ``?draft=`` the draft to go on with. Submit starts the
    workflow (a draft's with the draft's own key); Save as draft keeps what is there,
    checked only for types and limits, and routes nothing."""
    user = _member(request)
    if not access.may_submit(user):
        # An auditor: the styled 403 page says why, instead of an empty form.
        raise PermissionDenied(access.FORBIDDEN_AUDITOR)
    templates = _latest_templates(user)
    draft = None
    if request.GET.get("draft"):
        draft = draft_get(user=user, draft_id=request.GET["draft"])
        if draft is None:
            raise Http404  # someone else's, or none: the same answer
    fallback = draft.template_key if draft else (templates[0].key if templates else "")
    key = request.GET.get("template") or fallback
    template = next((t for t in templates if t.key == key), None)
    if template is None:
        return render(request, "approvals/workflow_new.html", {"templates": templates})
    definition: Definition = definition_for(template.pk)
    kept = draft_files(draft=draft) if draft and draft.workflow_id is None else []
    initial = {**draft.data, "subject_id": draft.subject_id} if draft else None
    form = SchemaForm(
        definition.schema, request.POST if request.method == "POST" else None, initial=initial
    )
    saving_draft = request.POST.get("intent") == "draft"
    idempotency_key = request.POST.get("idempotency_key") or None
    if idempotency_key is not None and not idempotency_key_valid(idempotency_key):
        form.add_error(None, IDEMPOTENCY_KEY_INVALID)
    status = 200
    if request.method == "POST":
        status = 400
        if saving_draft and _valid_as_draft(form):
            saved = _save_draft(request, user, template, form, draft, {f.sha256 for f in kept})
            if saved is not None:
                return saved
        elif not saving_draft and form.is_valid():
            try:
                files = files_checked(request, already={f.sha256 for f in kept})
                result = _start_or_submit(user, key, form, draft, idempotency_key)
            except (
                CommandRejected,
                TemplateNotFound,
                IdempotencyKeyReused,
                SubjectTaken,
                DraftRefused,
                access.Forbidden,
                AttachmentRefused,
            ) as exc:
                form.add_error(None, str(exc))
            except Busy:
                form.add_error(None, BUSY)
            except DraftNotFound:
                raise Http404 from None  # deleted meanwhile (in another tab)
            else:
                started = _started(request, user, result)
                if not result.existing:
                    files_recorded(request, user, result.workflow_id, files, idempotency_key)
                return started
    return render(
        request,
        "approvals/workflow_new.html",
        {
            "templates": templates,
            "template": template,
            "form": form,
            "draft": draft,
            "draft_saved": present.when(draft.updated_at) if draft else "",
            "draft_files": [draft_file_row(f) for f in kept],
            "idempotency_key": idempotency_key or uuid.uuid4().hex,
            **file_field_context(),
        },
        status=status,
    )


def _valid_as_draft(form: SchemaForm) -> bool:
    """The form checked as a draft: every value there must fit its field, but nothing
    is required yet. (The fields say what is required again when shown.)"""
    required = {name: field.required for name, field in form.fields.items()}
    for field in form.fields.values():
        field.required = False
    try:
        return form.is_valid()
    finally:
        for name, field in form.fields.items():
            field.required = required[name]


def _save_draft(
    request: HttpRequest,
    user: User,
    template: WorkflowTemplate,
    form: SchemaForm,
    draft: Draft | None,
    kept: set[str],
) -> HttpResponse | None:
    """Save the form as a new draft or over ``draft``, with the files it brought (checked
    first, against the draft's ``kept`` files for the count); a redirect to My
    requests, or None with the refusal added to the form."""
    fields: dict[str, Any] = {
        "template_key": template.key,
        "subject_type": template.key,
        "subject_id": form.cleaned_data.get("subject_id") or "",
        "data": form.data_for_engine(),
    }
    try:
        files = files_checked(request, already=kept)
        if draft is None:
            draft = draft_save(author=user, **fields)
        else:
            draft = draft_update(author=user, draft_id=draft.pk, **fields)
    except (
        CommandRejected,
        TemplateNotFound,
        DraftRefused,
        access.Forbidden,
        AttachmentRefused,
    ) as exc:
        form.add_error(None, str(exc))
        return None
    except DraftNotFound:
        raise Http404 from None  # deleted meanwhile (in another tab)
    messages.success(request, present.draft_saved(template.title))
    draft_files_kept(request, user, draft, files)
    return HttpResponseRedirect(reverse("my-workflows"))


def _start_or_submit(
    user: User, key: str, form: SchemaForm, draft: Draft | None, idempotency_key: str | None
) -> StartResult:
    """Start the workflow from the form; a draft is brought up to date and submitted
    (with its own key, so a second submission starts nothing more)."""
    fields: dict[str, Any] = {
        "template_key": key,
        "subject_type": key,
        "subject_id": form.cleaned_data["subject_id"],
        "data": form.data_for_engine(),
    }
    if draft is None:
        return workflow_start(
            submitter=user,
            template_key=key,
            subject_type=key,
            subject_id=fields["subject_id"],
            data=fields["data"],
            idempotency_key=idempotency_key,
        )
    if draft.workflow_id is None:
        draft_update(author=user, draft_id=draft.pk, **fields)
    return draft_submit(author=user, draft_id=draft.pk)


def _started(request: HttpRequest, user: User, result: StartResult) -> HttpResponse:
    """Where a start leads: the workflow's page, with what happened in a sentence."""
    wid = str(result.workflow_id)
    wf = workflow_get(user=user, workflow_id=wid)
    if wf is not None:
        step = present.step_title(_raw(wf.template), wf.current_step)
        then = present.next_phrase(status=wf.status, step_title=step, step=wf.current_step)
        done = "Already running:" if result.existing else "Submitted"
        messages.success(request, f"{done} {_subject(wf)}. {then}")
    return HttpResponseRedirect(reverse("workflow", args=[wid]))


# -- out of office -------------------------------------------------------------------------


PEOPLE_QUERY_INVALID = "Type 1 to 100 characters of a name or user name."
PEOPLE_DATALIST = "people-list"


def people_field(label: str, help_text: str) -> forms.CharField:
    """A colleague by user name, typed: suggestions come from ``/people`` (app.js fills
    the page's datalist); without the script the user name typed is what counts."""
    return forms.CharField(
        label=label,
        help_text=help_text,
        max_length=150,
        widget=forms.TextInput(
            attrs={
                "list": PEOPLE_DATALIST,
                "autocomplete": "off",
                "data-people": reverse_lazy("people"),
                "placeholder": "Type a name, e.g. Ivan",
            }
        ),
    )


class OutOfOfficeForm(forms.Form):
    delegate = people_field(
        "Who decides for you",
        "Type a name or user name and pick the colleague. They get the tasks that arrive "
        "while you are away.",
    )
    first_day = BoundedDateField(label="First day away")
    last_day = BoundedDateField(label="Last day away")
    reason = forms.CharField(label="Note (optional)", required=False, max_length=200)
    hand_over = forms.BooleanField(
        label="Also hand over the tasks I hold now",
        required=False,
        help_text="They go to your colleague at once, who decides them for you; they stay "
        "with them when you are back.",
    )

    def period(self) -> tuple[dt.datetime, dt.datetime]:
        """The absence as moments: from the first day's start to the end of the last
        day, in the person's zone. Call after ``is_valid``."""
        zone = timezone.get_current_timezone()
        first, last = self.cleaned_data["first_day"], self.cleaned_data["last_day"]
        starts = dt.datetime.combine(first, dt.time.min, tzinfo=zone)
        return starts, dt.datetime.combine(last + dt.timedelta(days=1), dt.time.min, tzinfo=zone)

    def colleague(self, user: User) -> User | None:
        """The stand-in named, in ``user``'s organisation; None (and the field's error
        NO_SUCH_COLLEAGUE) when nobody there has that name."""
        found = User.objects.filter(
            tenant_id=user.member_tenant_id, username=self.cleaned_data["delegate"]
        ).first()
        if found is None:
            self.add_error("delegate", NO_SUCH_COLLEAGUE)
        return found

    def refused(self, exc: Exception) -> None:
        """Show a service's refusal beside the field it is about."""
        first, last = self.cleaned_data["first_day"], self.cleaned_data["last_day"]
        self.add_error("delegate" if last >= first else "last_day", str(exc))


@login_required
@require_http_methods(["GET"])
def people(request: HttpRequest) -> JsonResponse:
    """Colleagues whose names start with what was typed (``?q=``), for the fields that
    name one; at most ten, so the answer stays small in an organisation of any size."""
    user = _member(request)
    text = request.GET.get("q", "").strip()
    if not 1 <= len(text) <= 100 or "\x00" in text:
        return JsonResponse({"error": PEOPLE_QUERY_INVALID}, status=400)
    found = colleagues_matching(user=user, text=text)
    return JsonResponse(
        {"people": [{"username": c.username, "name": c.name, "label": c.label} for c in found]}
    )


@login_required
@require_http_methods(["GET", "POST"])
def out_of_office(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    # Any user name may be typed, the person's own too, so that the service is what
    # refuses a bad delegate with its own words.
    form = OutOfOfficeForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            first = form.cleaned_data["first_day"]
            last = form.cleaned_data["last_day"]
            starts, ends = form.period()
            delegate = form.colleague(user)
            if delegate is not None:
                try:
                    absence = delegation_set(
                        user=user,
                        delegate=delegate,
                        starts_at=starts,
                        ends_at=ends,
                        reason=form.cleaned_data["reason"],
                    )
                except DelegationRefused as exc:
                    form.refused(exc)
                else:
                    name = delegate.first_name or delegate.username
                    messages.success(
                        request,
                        f"While you are away ({first.day} {first:%b} to {last.day} {last:%b}), "
                        f"{name} decides your tasks.",
                    )
                    if form.cleaned_data["hand_over"]:
                        hand_over_said(request, user, absence.pk, delegate)
                    return HttpResponseRedirect(reverse("out-of-office"))
    now = timezone.now()
    current = (
        Delegation.objects.filter(user=user, ends_at__gt=now)
        .select_related("delegate")
        .order_by("starts_at")
    )
    return render(
        request,
        "approvals/out_of_office.html",
        {
            "form": form,
            "delegations": [
                {
                    "id": d.pk,
                    "delegate": d.delegate.first_name or d.delegate.username,
                    "starts": present.day(d.starts_at),
                    "ends": present.day(d.ends_at - dt.timedelta(seconds=1)),
                    "reason": d.reason,
                    "current": d.starts_at <= now,
                }
                for d in current
            ],
        },
        status=status,
    )


# -- search ------------------------------------------------------------------------------


@login_required
def search(request: HttpRequest) -> HttpResponse:
    """The same search as ``GET /api/workflows`` (approvals.web.search), with the same
    parameter names, so a search's address can be shared or asked of the API."""
    _member(request)
    filters = WorkflowSearch(request.GET or None, request=request)
    paging = search_results.PageForm(request.GET)
    rows: list[dict[str, Any]] | None = None
    links: dict[str, str] = {}
    status, page = 200, paging.number()
    if request.GET:
        if filters.is_valid() and paging.is_valid():
            size = PAGE_SIZE
            found = filters.results(
                limit=size + 1, offset=(page - 1) * size, columns=search_page.PAGE_COLUMNS
            )
            rows = _workflow_rows(filters.user, found[:size])
            links = search_results.page_links(request.GET.dict(), page, more=len(found) > size)
        else:
            status = 400
    context = {"form": filters.form, "paging": paging, "page": page, "links": links}
    return render(request, "approvals/search.html", {**context, "rows": rows}, status=status)


@login_required
def search_export(request: HttpRequest) -> HttpResponseBase:
    """The whole result of a search as CSV, streamed; a refused search is the search
    page with its errors (and nothing is exported)."""
    _member(request)
    filters = WorkflowSearch(request.GET, request=request)
    if not filters.is_valid():
        context = {"form": filters.form, "paging": search_results.PageForm(), "rows": None}
        return render(request, "approvals/search.html", context, status=400)
    lines = search_results.search_csv(filters, zone=timezone.get_current_timezone())
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    name = search_results.csv_filename(timezone.localtime())
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
