"""The pages' part of drafts that is not the new-request form (pages/start.py holds
that): submitting a draft from My requests, and deleting one after asking."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from templates_engine import CommandRejected
from templates_engine import errors as engine_errors

from .. import access
from ..models import Draft
from ..runtime.commands import Busy
from ..selectors.drafts import draft_get
from ..selectors.templates import workflow_template_latest
from ..services.drafts import (
    SUBJECT_MISSING_CODE,
    DraftNotFound,
    DraftRefused,
    draft_delete,
    draft_submit,
)
from ..services.workflows import IdempotencyKeyReused, SubjectTaken, TemplateNotFound
from ..web import present
from .common import BUSY, _member
from .start import _started

DRAFT_DELETED = "Deleted the draft {subject}."
REFERENCE = "Reference"


def _edit_url(draft: Draft) -> str:
    return f"{reverse('workflow-new')}?template={draft.template_key}&draft={draft.pk}"


def _title_and_schema(draft: Draft) -> tuple[str, Mapping[str, Any] | None]:
    template = workflow_template_latest(tenant_id=draft.tenant_id, key=draft.template_key)
    if template is None:
        return present.humanise(draft.template_key), None
    raw = template.definition if isinstance(template.definition, Mapping) else {}
    schema = raw.get("schema")
    return template.title, schema if isinstance(schema, Mapping) else None


def _missing(draft: Draft, schema: Mapping[str, Any] | None) -> list[str]:
    """The labels of the fields a submission needs that the draft leaves empty."""
    required = [n for n in (schema or {}).get("required") or [] if isinstance(n, str)]
    labels = [present.field_label(schema, n) for n in required if n not in draft.data]
    return labels + ([REFERENCE] if not draft.subject_id else [])


@login_required
@require_http_methods(["POST"])
def draft_submit_page(request: HttpRequest, draft_id: str) -> HttpResponse:
    """Submit a draft from My requests. One that is not complete goes back to its form,
    with the fields still to fill in, in a sentence."""
    user = _member(request)
    draft = draft_get(user=user, draft_id=draft_id)
    if draft is None:
        raise Http404
    try:
        result = draft_submit(author=user, draft_id=draft.pk)
    except DraftNotFound:
        raise Http404 from None
    except (CommandRejected, DraftRefused) as exc:
        incomplete = exc.code in (engine_errors.INVALID_DATA, SUBJECT_MISSING_CODE)
        _, schema = _title_and_schema(draft)
        text = present.draft_incomplete(_missing(draft, schema)) if incomplete else exc.message
        messages.error(request, text)
        return HttpResponseRedirect(_edit_url(draft))
    except (TemplateNotFound, IdempotencyKeyReused, SubjectTaken, access.Forbidden) as exc:
        messages.error(request, str(exc))
        return HttpResponseRedirect(reverse("my-workflows"))
    except Busy:
        messages.error(request, BUSY)
        return HttpResponseRedirect(reverse("my-workflows"))
    return _started(request, user, result)


@login_required
@require_http_methods(["GET", "POST"])
def draft_delete_page(request: HttpRequest, draft_id: str) -> HttpResponse:
    """Asks first (GET), deletes on the answer (POST)."""
    user = _member(request)
    draft = draft_get(user=user, draft_id=draft_id)
    if draft is None:
        raise Http404
    title, schema = _title_and_schema(draft)
    subject = f"{title} {draft.subject_id}".strip()
    if request.method == "POST":
        try:
            draft_delete(author=user, draft_id=draft.pk)
        except DraftNotFound:
            raise Http404 from None
        except DraftRefused as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, DRAFT_DELETED.format(subject=subject))
        return HttpResponseRedirect(reverse("my-workflows"))
    return render(
        request,
        "approvals/draft_delete.html",
        {
            "draft": draft,
            "subject": subject,
            "figures": present.key_figures(schema, draft.data),
            "saved": present.when(draft.updated_at),
            "edit": _edit_url(draft),
        },
    )
