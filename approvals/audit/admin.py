"""The audit export in the admin: an action on the workflow list (the selected
workflows' histories) and a page with the filters (every workflow's). Both stream the
file; both are for auditors and superusers, within their own organisation."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils import timezone

from .. import access
from ..models import WorkflowStatus, WorkflowTemplate, time_bounds
from ..web import present
from .api import audit_response
from .export import ExportFilter

NOT_YOURS = "Only workflows of your own organisation are exported."


def may_export(request: HttpRequest) -> bool:
    user: Any = request.user
    return access.admin_may(user, "view", "workflowevent") and access.may_audit(user)


def _status_choices() -> list[tuple[str, str]]:
    words = present.STATUS_WORDS
    return [("", "Any"), *((code, words.get(code, code)) for code, _ in WorkflowStatus.choices)]


class ExportForm(forms.Form):
    """The export's filters in the auditor's words: workflow templates by title,
    statuses in words, times in her own time zone (the one the pages show)."""

    format = forms.ChoiceField(
        choices=[("csv", "CSV (opens in a spreadsheet)"), ("jsonl", "JSON Lines")],
        initial="csv",
    )
    template = forms.ChoiceField(required=False, label="Workflow template", choices=[])
    status = forms.ChoiceField(required=False, choices=_status_choices, label="Workflow status")
    since = forms.DateTimeField(required=False, label="Events from")
    until = forms.DateTimeField(required=False, label="Events before")
    subject = forms.CharField(
        required=False, max_length=200, help_text="A subject id, or type:id (expense:E-1)"
    )
    person = forms.CharField(
        required=False, max_length=150, help_text="A username who acted or submitted"
    )

    def __init__(self, *args: Any, tenant_id: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        titles: dict[str, str] = {}
        rows = WorkflowTemplate.objects.none()
        if tenant_id is not None:
            rows = WorkflowTemplate.objects.filter(tenant_id=tenant_id).order_by("key", "-version")
        for key, title in rows.values_list("key", "title"):
            titles.setdefault(key, title or present.humanise(key))
        by_title = sorted(titles.items(), key=lambda kv: kv[1])
        self.fields["template"].choices = [("", "Any"), *by_title]  # type: ignore[attr-defined]
        zone = timezone.get_current_timezone_name()
        self.fields[
            "since"
        ].help_text = f"In your time zone ({zone}), e.g. 2026-01-01 or 2026-01-01 09:00"
        self.fields["until"].help_text = f"In your time zone ({zone})"

    def _moment(self, name: str) -> Any:
        # A UTC offset past fourteen hours, or a date outside 1970..2200, broke the
        # export's stream after its 200: refused here, in words.
        value = self.cleaned_data.get(name)
        if value is not None:
            problem = time_bounds.moment_problem(value)
            if problem is not None:
                raise forms.ValidationError(problem, code="out_of_range")
        return value

    def clean_since(self) -> Any:
        return self._moment("since")

    def clean_until(self) -> Any:
        return self._moment("until")


class AuditExportAdmin(admin.ModelAdmin):
    """Mixed into the workflow admin."""

    actions = ["export_csv", "export_jsonl"]

    def has_audit_permission(self, request: HttpRequest) -> bool:
        return may_export(request)

    def _export(self, request: HttpRequest, queryset: Any, fmt: str) -> HttpResponseBase | None:
        user: Any = request.user
        tenant_ids = set(queryset.values_list("tenant_id", flat=True).distinct())
        if tenant_ids - {user.member_tenant_id}:
            self.message_user(request, NOT_YOURS, messages.ERROR)
            return None
        return audit_response(
            tenant_id=user.member_tenant_id,
            tenant_slug=user.tenant.slug,
            filters=ExportFilter(workflow_ids=list(queryset.values_list("pk", flat=True))),
            fmt=fmt,
        )

    @admin.action(description="Export history as CSV", permissions=["audit"])
    def export_csv(self, request: HttpRequest, queryset: Any) -> HttpResponseBase | None:
        return self._export(request, queryset, "csv")

    @admin.action(description="Export history as JSON Lines", permissions=["audit"])
    def export_jsonl(self, request: HttpRequest, queryset: Any) -> HttpResponseBase | None:
        return self._export(request, queryset, "jsonl")

    def get_urls(self) -> list[URLPattern]:
        page = path(
            "audit-export/",
            self.admin_site.admin_view(self.audit_export_view),
            name="approvals_workflow_audit_export",
        )
        return [page, *super().get_urls()]

    def audit_export_view(self, request: HttpRequest) -> HttpResponseBase:
        if not may_export(request):
            raise PermissionDenied
        user: Any = request.user
        form = ExportForm(
            request.GET if "format" in request.GET else None, tenant_id=user.member_tenant_id
        )
        if form.is_bound and form.is_valid():
            data = form.cleaned_data
            return audit_response(
                tenant_id=user.member_tenant_id,
                tenant_slug=user.tenant.slug,
                filters=ExportFilter(
                    template=data["template"] or None,
                    status=data["status"] or None,
                    since=data["since"],
                    until=data["until"],
                    subject=data["subject"] or None,
                    person=data["person"] or None,
                ),
                fmt=data["format"],
            )
        context = {
            **self.admin_site.each_context(request),
            "title": "Export the audit trail",
            "form": form,
            "organisation": user.tenant,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/approvals/audit_export.html", context)

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        extra = {**(extra_context or {}), "audit_export": may_export(request)}
        return super().changelist_view(request, extra)
