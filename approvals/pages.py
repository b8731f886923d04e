"""Server-rendered pages: the inbox, a workflow with its history, and the start form.
Views parse the form, call one service or selector, and render; no logic lives here."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected, Definition

from . import access
from .decisions import DECISION_LABELS, DECISION_RECORDED
from .definitions import definition_for
from .models import User, WorkflowTemplate
from .request_ids import request_id_valid
from .runtime.commands import Busy, RequestIdReused, WorkflowNotFound
from .selectors.tasks import BadCursor, task_list_for_user
from .selectors.templates import workflow_templates_latest
from .selectors.workflows import (
    workflow_assignees,
    workflow_get,
    workflow_history,
    workflow_search,
)
from .services.workflows import (
    IDEMPOTENCY_KEY_INVALID,
    IdempotencyKeyReused,
    TemplateNotFound,
    idempotency_key_valid,
    workflow_decide,
    workflow_start,
)

REJECTION_TEXT = {
    "NOT_YOUR_STEP": "This step is not yours to decide (any more).",
    "ALREADY_DECIDED": "You have already approved this step.",
    "WORKFLOW_FINISHED": "This workflow has already finished.",
    "SEGREGATION_OF_DUTIES": "You submitted this request, so you cannot decide it.",
}


def _member(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or user.tenant_id is None:
        raise Http404
    return user


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    try:
        page = task_list_for_user(user=user, limit=25, cursor=request.GET.get("cursor"))
    except BadCursor:
        return HttpResponseRedirect(reverse("inbox"))
    rows = [{"task": t, "request_id": uuid.uuid4().hex} for t in page.tasks]
    return render(
        request,
        "approvals/inbox.html",
        {
            "rows": rows,
            "next_cursor": page.next_cursor,
            "decisions": DECISION_LABELS,
        },
    )


@login_required
def my_workflows(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    rows = workflow_search(user=user, submitter=user.username, limit=100)
    return render(request, "approvals/my_workflows.html", {"workflows": rows})


@login_required
def workflow_detail(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    wf = workflow_get(user=user, workflow_id=workflow_id)
    if wf is None:
        raise Http404
    assignees = workflow_assignees(workflow=wf)
    mine = any(a["user"] == user.username for a in assignees)
    return render(
        request,
        "approvals/workflow_detail.html",
        {
            "wf": wf,
            "history": workflow_history(workflow=wf),
            "assignees": assignees,
            "mine": mine,
            "request_id": uuid.uuid4().hex,
            "decisions": DECISION_LABELS,
        },
    )


@login_required
@require_http_methods(["POST"])
def decide(request: HttpRequest, workflow_id: str) -> HttpResponse:
    user = _member(request)
    decision = request.POST.get("decision", "")
    request_id = request.POST.get("request_id", "")
    comment = request.POST.get("comment", "")[:4000]
    back = request.POST.get("next") or reverse("workflow", args=[workflow_id])
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("inbox")  # never bounce to another site
    if decision not in DECISION_LABELS or not request_id_valid(request_id):
        messages.error(request, "That decision could not be read; please try again.")
        return HttpResponseRedirect(back)
    try:
        result = workflow_decide(
            user=user,
            workflow_id=workflow_id,
            decision=decision,
            request_id=request_id,
            comment=comment,
        )
    except WorkflowNotFound:
        raise Http404 from None  # unknown, or another organisation's: the same answer
    except CommandRejected as exc:
        messages.error(request, REJECTION_TEXT.get(exc.code, exc.message))
    except (access.Forbidden, RequestIdReused) as exc:
        messages.error(request, str(exc))
    except Busy:
        messages.error(request, "The workflow is busy; please try again.")
    else:
        verb = DECISION_RECORDED[decision]
        note = " (already recorded)" if result.duplicate else ""
        messages.success(request, f"{verb}{note}. The workflow is now {result.status}.")
    return HttpResponseRedirect(back)


def _field_for(name: str, spec: dict[str, Any], required: bool) -> forms.Field:
    label = spec.get("title") or name
    kind = spec.get("type")
    if "enum" in spec:
        return forms.ChoiceField(
            label=label, required=required, choices=[(v, v) for v in spec["enum"]]
        )
    if kind == "integer":
        return forms.IntegerField(
            label=label,
            required=required,
            min_value=spec.get("minimum"),
            max_value=spec.get("maximum"),
        )
    if kind == "number":
        return forms.FloatField(label=label, required=required)
    if kind == "boolean":
        return forms.BooleanField(label=label, required=False)
    return forms.CharField(label=label, required=required, max_length=spec.get("maxLength"))


def _data_form(definition: Definition, data: Any = None) -> forms.Form:
    """A form built from the workflow template's JSON Schema."""
    form = forms.Form(data)
    schema = definition.schema or {}
    required = set(schema.get("required", []))
    for name, spec in (schema.get("properties") or {}).items():
        form.fields[name] = _field_for(name, spec, name in required)
    form.fields["subject_id"] = forms.CharField(label="Reference", max_length=128)
    return form


def _latest_templates(user: User) -> list[WorkflowTemplate]:
    assert user.member_tenant_id is not None
    latest = workflow_templates_latest(tenant_id=user.member_tenant_id)
    return [t for t in latest if access.may_start(user, t.key)]


@login_required
@require_http_methods(["GET", "POST"])
def workflow_new(request: HttpRequest) -> HttpResponse:
    user = _member(request)
    templates = _latest_templates(user)
    key = request.GET.get("template") or (templates[0].key if templates else "")
    template = next((t for t in templates if t.key == key), None)
    if template is None:
        return render(request, "approvals/workflow_new.html", {"templates": templates})
    definition = definition_for(template.pk)
    form = _data_form(definition, request.POST if request.method == "POST" else None)
    idempotency_key = request.POST.get("idempotency_key") or None
    if idempotency_key is not None and not idempotency_key_valid(idempotency_key):
        form.add_error(None, IDEMPOTENCY_KEY_INVALID)
    if request.method == "POST" and form.is_valid():
        data = {
            k: v for k, v in form.cleaned_data.items() if k != "subject_id" and v not in (None, "")
        }
        try:
            result = workflow_start(
                submitter=user,
                template_key=key,
                subject_type=key,
                subject_id=form.cleaned_data["subject_id"],
                data=data,
                idempotency_key=idempotency_key,
            )
        except (CommandRejected, TemplateNotFound, IdempotencyKeyReused, access.Forbidden) as exc:
            form.add_error(None, str(exc))
        except Busy:
            form.add_error(None, "The workflow is busy; please try again.")
        else:
            messages.success(request, f"Submitted. Status: {result.status}.")
            return HttpResponseRedirect(reverse("workflow", args=[result.workflow_id]))
    return render(
        request,
        "approvals/workflow_new.html",
        {
            "templates": templates,
            "template": template,
            "form": form,
            "idempotency_key": uuid.uuid4().hex,
        },
    )
