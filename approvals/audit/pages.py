"""The auditor's Verify page: the same check as ``verify_audit`` (``audit_verify``) for
the person's organisation, one workflow template or one workflow, told in words: how
many requests verify, or which request, which event and what is wrong, the first
broken link first. Auditors, organisation admins and superusers (``access.may_audit``),
each for their own organisation. The check runs while the page is asked for; the page
says how long it took for how many events."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from .. import access
from ..models import User, Workflow, WorkflowEvent, WorkflowTemplate
from ..runtime import replica
from ..web import present
from . import verify
from .models import ChainSeal
from .verify import Break, audit_verify

SCOPE_ORGANISATION = "organisation"
SCOPE_TEMPLATE = "template"
SCOPE_WORKFLOW = "workflow"
CHOOSE_TEMPLATE = "Choose the kind of request to verify."
GIVE_REFERENCE = "Give the request's reference (E-1042) or its id from its page."
NO_SUCH_REQUEST = "No request of your organisation has the reference {ref}."
SEVERAL_REQUESTS = (
    "{n} requests have the reference {ref}: give the id from the page of the one you mean."
)
ALL_VERIFY = "All {workflows} request{s} verify: every event chains to the one before{seals}."
SEALS_CHECK = " and every seal checks"
NO_SEALS_YET = " (no seal has been made yet, so only the chains were checked)"
FOUND = "{n} problem{s} found."
# How many problems the page lists; the command (verify_audit) prints every one.
SHOWN = 200

# What a break's text says, in a sentence a person reads (the first match wins).
_WHAT_WORDS: tuple[tuple[str, str], ...] = (
    (
        "but does with its numbers spelled as",
        "Its hash was taken over a number as it was sent (1e+17) and the database stores "
        "it in its own form (100000000000000000): the values are the same, but the event "
        "verifies only once an operator accepts it (accept_number_forms, recorded).",
    ),
    (
        "its content does not match its hash",
        "Its content no longer matches its hash: it was changed after it was written.",
    ),
    (
        "does not link to the event before it",
        "It does not carry the hash of the event before "
        "it: an event before it was changed, removed or put in.",
    ),
    ("missing (the next event is", "This event is gone from the history"),
    ("are gone (the workflow records version", "The last events of the history are gone"),
    (
        "the last event's hash is not the workflow's last_hash",
        "The history's last event is not the one the request recorded as its last.",
    ),
    (
        "no longer matches the head sealed by",
        "The history was rewritten after it was sealed: "
        "its hash at this event is not the one the seal holds.",
    ),
    (verify.OTHER_TENANT, "This event belongs to another organisation than its request."),
)
_KIND_WORDS = {
    "WorkflowStarted": "the start of the request",
    "ApprovalRequested": "the request for approval",
    "DecisionRecorded": "a decision",
    "StepCompleted": "the end of a step",
    "SentBack": "a send-back",
    "Resubmitted": "a resubmission",
    "ReminderSent": "a reminder",
    "Escalated": "an escalation",
    "ApproverAdded": "the addition of an approver",
    "WorkflowCompleted": "the approval of the request",
    "WorkflowRejected": "the rejection of the request",
    "WorkflowCancelled": "the cancellation of the request",
}


class VerifyForm(forms.Form):
    scope = forms.ChoiceField(
        label="What to verify",
        choices=[
            (SCOPE_ORGANISATION, "Every request of the organisation"),
            (SCOPE_TEMPLATE, "Every request of one kind"),
            (SCOPE_WORKFLOW, "One request"),
        ],
        initial=SCOPE_ORGANISATION,
        widget=forms.RadioSelect,
    )
    template = forms.ChoiceField(label="Kind of request", required=False)
    workflow = forms.CharField(
        label="Request",
        required=False,
        max_length=200,
        help_text="Its reference (E-1042) or the id from its page",
    )

    def __init__(self, *args: Any, tenant_id: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tenant_id = tenant_id
        titles: dict[str, str] = {}
        for key, title in (
            WorkflowTemplate.objects.filter(tenant_id=tenant_id)
            .order_by("key", "-version")
            .values_list("key", "title")
        ):
            titles.setdefault(key, title or present.humanise(key))
        choices = [("", "—"), *sorted(titles.items(), key=lambda kv: kv[1])]
        self.fields["template"].choices = choices  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        scope = data.get("scope")
        if scope == SCOPE_TEMPLATE and not data.get("template"):
            self.add_error("template", CHOOSE_TEMPLATE)
        if scope == SCOPE_WORKFLOW:
            ref = (data.get("workflow") or "").strip()
            if not ref:
                self.add_error("workflow", GIVE_REFERENCE)
            else:
                found = _workflows_named(self.tenant_id, ref)
                if not found:
                    self.add_error("workflow", NO_SUCH_REQUEST.format(ref=ref))
                elif len(found) > 1:
                    self.add_error("workflow", SEVERAL_REQUESTS.format(n=len(found), ref=ref))
                else:
                    data["workflow_id"] = found[0]
        return data


def _workflows_named(tenant_id: int, ref: str) -> list[uuid.UUID]:
    mine = Workflow.objects.filter(tenant_id=tenant_id)
    try:
        return list(mine.filter(pk=uuid.UUID(ref)).values_list("pk", flat=True))
    except ValueError:
        pass
    kind, _, ident = ref.rpartition(":")
    named = mine.filter(subject_id=ident)
    if kind:
        named = named.filter(subject_type=kind)
    return list(named.values_list("pk", flat=True)[:10])


@dataclass(frozen=True)
class Problem:
    """One break as the page tells it."""

    request: str  # "Expense claim E-1", or the workflow's id when it is gone
    url: str | None
    position: str  # "event 3 of 7: a decision (Bob, Manager)"
    what: str
    technical: str


def _what_words(what: str) -> str:
    for start, words in _WHAT_WORDS:
        if what.startswith(start) or start in what:
            return words
    return what[:1].upper() + what[1:] + ("" if what.endswith(".") else ".")


def _kind_words(kind: str) -> str:
    return _KIND_WORDS.get(kind) or present.humanise(kind).lower()


def _problems(tenant_id: int, breaks: Iterable[Break]) -> list[Problem]:
    breaks = list(breaks)
    ids = {b.workflow_id for b in breaks if b.workflow_id}
    workflows = {
        str(wf.pk): wf
        for wf in Workflow.objects.filter(tenant_id=tenant_id, pk__in=ids).select_related(
            "template"
        )
    }
    wanted = [(b.workflow_id, b.seq) for b in breaks if b.workflow_id and b.seq]
    events: dict[tuple[str, int], WorkflowEvent] = {}
    for wid, seq in wanted:
        if (wid, seq) in events or wid not in workflows:
            continue
        event = (
            WorkflowEvent.objects.filter(workflow_id=wid, seq=seq).select_related("actor").first()
        )
        if event is not None:
            events[(wid, seq)] = event
    out = []
    for b in breaks:
        wf = workflows.get(b.workflow_id or "")
        if wf is None:
            request = (
                f"Request {b.workflow_id} (no longer in the database)"
                if b.workflow_id
                else ("The seals")
            )
            url = None
        else:
            request = f"{wf.template.title} {wf.subject_id}".strip()
            url = reverse("workflow", args=[wf.pk])
        out.append(
            Problem(
                request=request,
                url=url,
                position=_position(b, wf, events.get((b.workflow_id or "", b.seq or 0))),
                what=_what_words(b.what),
                technical=str(b),
            )
        )
    return out


def _position(b: Break, wf: Workflow | None, event: WorkflowEvent | None) -> str:
    if b.seq is None:
        return ""
    of = f" of {wf.version}" if wf is not None and wf.version else ""
    where = f"Event {b.seq}{of}"
    if event is None:
        return where
    raw: Mapping[str, Any] = (
        wf.template.definition
        if wf is not None and isinstance(wf.template.definition, Mapping)
        else {}
    )
    payload = event.payload if isinstance(event.payload, Mapping) else {}
    details = []
    if event.actor is not None:
        details.append(event.actor.first_name or event.actor.username)
    step = present.step_title(raw, payload.get("step"))
    if step:
        details.append(step)
    details.append(present.when(event.created_at))
    return f"{where}: {_kind_words(event.type)} ({', '.join(details)})"


def _number(n: int) -> str:
    """1,204 (Indian grouping past a lakh: 1,00,000)."""
    text = str(n)
    if len(text) <= 3:
        return text
    head, tail = text[:-3], text[-3:]
    groups: list[str] = []
    while len(head) > 2:
        groups.insert(0, head[-2:])
        head = head[:-2]
    if head:
        groups.insert(0, head)
    return ",".join([*groups, tail])


@login_required
def verify_page(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not isinstance(user, User) or not access.may_audit(user):
        raise PermissionDenied
    tenant_id = user.member_tenant_id
    form = VerifyForm(request.GET if "scope" in request.GET else None, tenant_id=tenant_id)
    context: dict[str, Any] = {"form": form}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        scope = data["scope"]
        template_key = data.get("template") if scope == SCOPE_TEMPLATE else None
        workflow_id = data.get("workflow_id") if scope == SCOPE_WORKFLOW else None
        began = time.monotonic()
        notes: list[str] = []

        def verify() -> tuple[list[Any], int]:
            notes.clear()  # read again from the primary if the replica fails under it
            return audit_verify(
                tenant=user.tenant, template_key=template_key, workflow_id=workflow_id, notes=notes
            )

        breaks, checked = replica.from_replica(verify)
        took = time.monotonic() - began
        events = WorkflowEvent.objects.filter(tenant_id=tenant_id)
        if template_key:
            events = events.filter(workflow__template_key=template_key)
        if workflow_id:
            events = events.filter(workflow_id=workflow_id)
        n_events = events.count()
        sealed = ChainSeal.objects.filter(tenant_id=tenant_id).exists()
        problems = _problems(tenant_id, breaks[:SHOWN])
        first = next((p for p, b in zip(problems, breaks, strict=False) if b.seq), None)
        context.update(
            {
                "ran": True,
                "ok": not breaks,
                "verdict": ALL_VERIFY.format(
                    workflows=_number(checked),
                    s="" if checked == 1 else "s",
                    seals=SEALS_CHECK if sealed else NO_SEALS_YET,
                )
                if not breaks
                else FOUND.format(n=_number(len(breaks)), s="" if len(breaks) == 1 else "s"),
                "first": first,
                "problems": problems,
                "more": max(0, len(breaks) - SHOWN),
                "daily": " ".join(notes),
                "timing": f"Checked {_number(n_events)} event{'s' if n_events != 1 else ''} of "
                f"{_number(checked)} request{'s' if checked != 1 else ''} in {took:.2f} s.",
            }
        )
    status = 400 if form.is_bound and not form.is_valid() else 200
    return render(request, "approvals/audit_verify.html", context, status=status)
