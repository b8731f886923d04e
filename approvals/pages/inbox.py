"""The inbox (tasks, with the lists and the summary line) and the requests someone made
(my workflows, with their drafts)."""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from templates_engine.steps.approval import HANDOVER_NOTE_MAX

from ..definitions import raw_definition_for
from ..models import HeldDecision, PendingTask, User, Workflow
from ..selectors.departments import kept_lists
from ..selectors.drafts import drafts_of
from ..selectors.held import held_open
from ..selectors.inbox_context import RowContext, inbox_context
from ..selectors.inbox_lists import InboxFilter, inbox_kinds, inbox_listing, requests_of
from ..selectors.questions import questions_for
from ..selectors.tasks import BadCursor
from ..selectors.templates import workflow_templates_latest
from ..web import inbox_lists as lists
from ..web import inbox_page, present
from ..web.hand_over import standing_in_marks
from ..words.data import KeptLists
from .common import (
    REASON_TEXTS,
    UNDO_SECONDS,
    _awaits_changes_from,
    _cached_schema,
    _member,
    _names,
    _query_without,
    _raw,
    _reason_required,
    _schema,
    _subject,
)
from .held import held_context
from .request import decision_words


def _question_rows(user: User) -> list[dict[str, Any]]:
    """The person's unanswered questions (``selectors.questions``), in words."""
    asked = questions_for(user=user)
    if not asked:
        return []
    workflows = Workflow.objects.select_related("template").in_bulk([q.workflow_id for q in asked])
    names = _names(user, [q.asker for q in asked])
    return [
        {
            "workflow_id": q.workflow_id,
            "url": reverse("workflow", args=[q.workflow_id]) + "#conversation",
            "subject": _subject(workflows[q.workflow_id]),
            "asker": present.person(q.asker, names),
            "text": q.text,
            "at": q.at,
            "when": present.when(q.at),
        }
        for q in asked
        if q.workflow_id in workflows
    ]


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    now = timezone.now()
    kinds = inbox_kinds(user)
    chosen, number, notes = lists.read_inbox_filter(request.GET, kinds)
    try:
        page = inbox_listing(
            user=user,
            filters=chosen,
            now=now,
            cursor=request.GET.get("cursor"),
            page=number,
            catalogue=kinds,
        )
    except BadCursor:
        return HttpResponseRedirect(reverse("inbox"))
    around = _around(user, page.tasks)
    constants = {
        **inbox_page.page_constants(request),
        "reason_texts": REASON_TEXTS,
        "handover_note_max": HANDOVER_NOTE_MAX,
    }
    forms = inbox_page.RowForms(constants)
    rows = []
    for t in page.tasks:
        row = _task_row(user, t, now, around)
        row["forms"] = forms(row)
        row["held"] = held_context(user, around.holds.get(str(t.workflow.pk)), row["subject"])
        rows.append(row)
    return render(
        request,
        "approvals/inbox.html",
        {
            "rows": rows,
            "questions": _question_rows(user),
            "next_cursor": page.next_cursor,
            "listing": page,
            "chosen": chosen,
            "notes": notes,
            "sorts": lists.SORT_LABELS,
            "filtered": chosen != InboxFilter(sort=chosen.sort),
            "query": _query_without(request, "page", "cursor"),
            "money": present.money_parts({str(r["currency"]) for r in rows if r["currency"]}),
            "undo_seconds": UNDO_SECONDS,
            **constants,
        },
    )


@dataclass(frozen=True)
class _Around:
    """What the rows of one page of tasks read beside the tasks, each fetched once for
    the page: receipts and earlier approvals, names, the others asked, resubmissions,
    the marks of standing in (and hand-over notes), the decisions held for undo."""

    context: dict[str, RowContext]
    names: dict[str, str]
    others: dict[tuple[str, str], list[str]]
    resubmitted: dict[str, lists.Resubmission]
    away: dict[int, dict[str, Any]]
    holds: dict[str, HeldDecision]
    lists: KeptLists  # the organisation's departments: a key shown by its name


def _around(user: User, tasks: list[PendingTask]) -> _Around:
    context = inbox_context(t.workflow_id for t in tasks)
    approvers = [u for c in context.values() for u, _ in c.approved]
    names = _names(
        user, [*approvers, *(u for t in tasks for u in (t.on_behalf_of, t.handed_on_from))]
    )
    others = lists.others_asked(user, tasks)
    kept = kept_lists(tenant_id=user.member_tenant_id)
    resubmitted = lists.resubmissions((t.workflow for t in tasks), kept)
    away = standing_in_marks(user, tasks)
    holds = held_open(tenant_id=user.member_tenant_id, workflow_ids={t.workflow_id for t in tasks})
    return _Around(context, names, others, resubmitted, away, holds, kept)


def _task_row(user: User, t: PendingTask, now: dt.datetime, a: _Around) -> dict[str, Any]:
    """One task's row of the inbox, in words, with what its decision forms need."""
    wf = t.workflow
    submitter = wf.submitter
    subject, schema = _subject(wf), _schema(wf.template)
    requester = (submitter.first_name or submitter.username) if submitter else ""
    words = decision_words(wf, t.step, requester)
    url, decide_url = inbox_page.workflow_links(t.workflow_id)
    return {
        "pk": t.pk,
        "url": url,
        "decide_url": decide_url,
        "since_iso": inbox_page.iso(t.created_at),
        "due_iso": inbox_page.iso(t.due_at),
        "waiting": lists.age(t.created_at, now),
        "since": present.when(t.created_at),
        "waits_on": lists.inbox_waits_on(a.others.get((str(wf.pk), t.step), [])),
        "resubmission": a.resubmitted.get(str(wf.pk)),
        "task": t,
        "wf": wf,
        "request_id": uuid.uuid4().hex,
        "subject": subject,
        "summary": wf.summary if wf.summary != subject else "",
        "requester": requester,
        "figures": present.key_figures(schema, wf.data),
        "facts": present.row_facts(schema, wf.data, a.lists),
        "receipts": present.receipts_words(a.context[str(wf.pk)].receipts),
        "approved": present.approved_before(
            a.context[str(wf.pk)].approved, a.names, _raw(wf.template)
        ),
        "step": present.step_title(_raw(wf.template), t.step),
        "behalf": present.person(t.on_behalf_of, a.names) if t.on_behalf_of else "",
        "handed_on": present.handed_on(t.handed_on_from, a.names),
        "due": present.when(t.due_at),
        "overdue": t.due_at < now,
        "resubmit": submitter is not None and submitter.pk == user.pk,
        "reason_required": _reason_required(wf, t.step),
        # what the decision forms offer and ask before they record
        "question": words["question"],
        "ask_first": "yes" if words["ask_first"] else "no",
        "amount_minor": words["amount_minor"],
        "currency": words["currency"],
        **inbox_page.outcome_values(words["outcomes"]),
        "for_user": "",
        **a.away.get(t.pk, {}),  # "for Bob", and hand-over notes
    }


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
    kinds = inbox_kinds(user)
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
            "questions": _question_rows(user),
            "drafts": _draft_rows(user),
            "kinds": kinds,
            "statuses": {k: words for k, (words, _) in lists.STATUS_FILTERS.items()},
            "chosen_status": status,
            "chosen_kind": kind,
            "filtered": bool(status or kind),
            "notes": notes,
        },
    )
