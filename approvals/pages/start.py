"""Starting a request: the new-request form, saved as a draft or submitted."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
)
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected, Definition

from .. import access
from ..definitions import definition_for
from ..models import Draft, User, WorkflowTemplate
from ..runtime.commands import Busy
from ..selectors.departments import department_choices
from ..selectors.drafts import draft_files, draft_get
from ..selectors.templates import workflow_templates_latest
from ..selectors.workflows import workflow_get
from ..services.attachments import AttachmentRefused
from ..services.drafts import DraftNotFound, DraftRefused, draft_save, draft_submit, draft_update
from ..services.workflows import (
    IDEMPOTENCY_KEY_INVALID,
    IdempotencyKeyReused,
    StartResult,
    SubjectTaken,
    TemplateNotFound,
    idempotency_key_valid,
    workflow_start,
)
from ..web import present
from ..web.forms import SchemaForm
from ..web.uploads import uploads_streamed
from .common import BUSY, _member, _raw, _subject
from .files import (
    draft_file_row,
    draft_files_kept,
    file_field_context,
    files_checked,
    files_recorded,
)


def _latest_templates(user: User) -> list[WorkflowTemplate]:
    templates = workflow_templates_latest(tenant_id=user.member_tenant_id)
    return access.templates_startable(user, templates)


NOTHING_YOU_MAY_START = (
    "Your organisation's kinds of request each name who may start them, and you are not "
    "among them. Ask a finance admin of your organisation to add you."
)


def _refused(request: HttpRequest, user: User, templates: list[WorkflowTemplate]) -> HttpResponse:
    """The list of what ``user`` may start, with why the kind asked for (``?template=``,
    or the only kinds there are) is not among them: 403 with a sentence."""
    key = request.GET.get("template") or ""
    # Only the start role is explained here; the rest (a template that does not exist,
    # an account of another system) keeps the plain list.
    every = [
        t
        for t in workflow_templates_latest(tenant_id=user.member_tenant_id)
        if access.may_start_at_all(user, t.key)
    ]
    asked = next((t for t in every if t.key == key), None)
    if asked is not None:
        try:
            access.check_may_start(user, asked.key)
        except access.Forbidden as exc:
            refusal = exc.message
        else:  # allowed meanwhile: nothing to say
            refusal = ""
    else:
        refusal = NOTHING_YOU_MAY_START if every and not templates else ""
    return render(
        request,
        "approvals/workflow_new.html",
        {"templates": templates, "refusal": refusal},
        status=403 if refusal else 200,
    )


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
        return _refused(request, user, templates)
    definition: Definition = definition_for(template.pk)
    kept = draft_files(draft=draft) if draft and draft.workflow_id is None else []
    initial = {**draft.data, "subject_id": draft.subject_id} if draft else None
    form = SchemaForm(
        definition.schema,
        request.POST if request.method == "POST" else None,
        initial=initial,
        departments=department_choices(tenant_id=user.member_tenant_id),
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
