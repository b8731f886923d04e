"""Retention and archive in the admin: how long the organisation keeps a request's
history after it finishes, and how much of that it stays in the live database (the
live window) before the archiver moves it to the archive store, where it stays
readable and nobody can change it. Set by organisation and finance admins; the rule is
retention.retention_set's, a refused value changes nothing."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from .. import access
from ..audit.retention import ArchiveError, retention_change, spans
from ..models import Tenant

MONTHS_WHOLE = "Give the live window in whole months, such as 12."
YEARS_WHOLE = "Give the retention in whole years, such as 7."
WINDOW_LONGER = (
    "The live window cannot be longer than the retention: at most {most} months ({years} years)."
)
SAVED = "Saved. {sentence}"


def window_sentence(months: int) -> str:
    """What the live window does, in the reader's words."""
    span = "1 month" if months == 1 else f"{months} months"
    return (
        f"Requests finished more than {span} ago move to the archive; they stay "
        "readable, and nobody can change them."
    )


def retention_sentence(years: int) -> str:
    span = "1 year" if years == 1 else f"{years} years"
    return (
        f"{span} after a request finishes, its history is deleted from the archive, "
        "unless a legal hold keeps it."
    )


class RetentionForm(forms.Form):
    years = forms.IntegerField(
        label="Keep history for (years)",
        min_value=1,
        max_value=100,
        error_messages={
            "invalid": YEARS_WHOLE,
            "required": YEARS_WHOLE,
            "min_value": "The retention is at least 1 year.",
            "max_value": "The retention is at most 100 years.",
        },
        help_text="Whole years after a request finishes, from 1 to 100.",
    )
    live_months = forms.IntegerField(
        label="Live window (months)",
        min_value=1,
        error_messages={
            "invalid": MONTHS_WHOLE,
            "required": MONTHS_WHOLE,
            "min_value": "The live window is at least 1 month.",
        },
        help_text="Whole months after a request finishes, from 1 to the retention in months.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        years, months = data.get("years"), data.get("live_months")
        if years is not None and months is not None and months > years * 12:
            self.add_error("live_months", WINDOW_LONGER.format(most=years * 12, years=years))
        return data


def retention_view(request: HttpRequest, admin_site: Any) -> HttpResponse:
    user: Any = request.user
    if not access.may_set_retention(user):
        raise PermissionDenied
    tenant = Tenant.objects.get(pk=user.tenant_id)
    years, months = spans(tenant.pk)
    form = RetentionForm(request.POST or None, initial={"years": years, "live_months": months})
    problem = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            change = retention_change(
                tenant=tenant,
                years=data["years"],
                live_months=data["live_months"],
                by=user.username,
            )
        except ArchiveError as exc:
            problem = str(exc)
        else:
            saved = SAVED.format(sentence=window_sentence(data["live_months"]))
            messages.success(request, f"{saved} {change.locks}".strip())
            return HttpResponseRedirect(reverse("admin:retention"))
    context = {
        **admin_site.each_context(request),
        "title": "Retention and archive",
        "form": form,
        "problem": problem,
        "organisation": tenant,
        "window_words": window_sentence(months),
        "retention_words": retention_sentence(years),
    }
    return TemplateResponse(
        request,
        "admin/approvals/retention.html",
        context,
        status=400 if request.method == "POST" else 200,
    )
