"""Django admin: finance admins edit workflow templates here; auditors read history."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.http import HttpRequest
from guardian.admin import GuardedModelAdmin

from templates_engine import Definition, DefinitionError

from .models import (
    ActivityAttempt,
    ApiToken,
    Delegation,
    OrgGroup,
    PendingTask,
    Tenant,
    Timer,
    User,
    Workflow,
    WorkflowEvent,
    WorkflowTemplate,
)
from .services.templates import workflow_template_publish
from .services.tokens import token_revoke


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]


@admin.register(User)
class ApprovalsUserAdmin(UserAdmin):
    list_display = ["username", "tenant", "manager", "email", "is_staff"]
    list_filter = ["tenant", "is_staff"]
    fieldsets = (*UserAdmin.fieldsets, ("Organisation", {"fields": ("tenant", "manager")}))  # type: ignore[misc]


@admin.register(OrgGroup)
class OrgGroupAdmin(admin.ModelAdmin):
    list_display = ["name", "key", "tenant"]
    filter_horizontal = ["members"]


@admin.register(Delegation)
class DelegationAdmin(admin.ModelAdmin):
    list_display = ["user", "delegate", "starts_at", "ends_at", "tenant"]


class WorkflowTemplateForm(forms.ModelForm):
    class Meta:
        model = WorkflowTemplate
        fields = ["tenant", "definition"]

    def clean_definition(self) -> Any:
        doc = self.cleaned_data["definition"]
        if isinstance(doc, str):
            try:
                doc = json.loads(doc)
            except json.JSONDecodeError as exc:
                raise forms.ValidationError(f"Not valid JSON: {exc}") from exc
        try:
            Definition.parse(doc)
        except DefinitionError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return doc


@admin.register(WorkflowTemplate)
class WorkflowTemplateAdmin(GuardedModelAdmin):
    """Saving never edits a published version: it publishes the next one."""

    form = WorkflowTemplateForm
    list_display = ["key", "version", "title", "tenant", "published_at", "published_by"]
    list_filter = ["tenant", "key"]

    def save_model(
        self, request: HttpRequest, obj: WorkflowTemplate, form: Any, change: bool
    ) -> None:
        published = workflow_template_publish(
            tenant=form.cleaned_data["tenant"],
            definition=form.cleaned_data["definition"],
            published_by=request.user if isinstance(request.user, User) else None,
        )
        obj.pk = published.pk
        obj.refresh_from_db()
        if change:
            messages.info(
                request,
                f"Published {published.key} version {published.version}; "
                "running workflows keep the version they started with.",
            )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class EventInline(admin.TabularInline):
    model = WorkflowEvent
    fields = ("seq", "type", "actor", "role", "on_behalf_of", "created_at", "payload")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["seq"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Workflow)
class WorkflowAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "template_key",
        "template_version",
        "subject_type",
        "subject_id",
        "public_status",
        "submitter",
        "created_at",
    ]
    list_filter = ["tenant", "template_key", "status"]
    search_fields = ["id", "subject_id"]
    inlines = [EventInline]


@admin.register(PendingTask)
class PendingTaskAdmin(ReadOnlyAdmin):
    list_display = ["assignee", "workflow", "step", "due_at", "on_behalf_of"]


@admin.register(Timer)
class TimerAdmin(ReadOnlyAdmin):
    list_display = ["workflow", "key", "kind", "fire_at", "fired_at", "failures", "dead_at"]
    list_filter = ["kind", "dead_at"]


@admin.register(ActivityAttempt)
class ActivityAttemptAdmin(ReadOnlyAdmin):
    list_display = [
        "workflow",
        "step",
        "undo",
        "attempt",
        "activity",
        "queue",
        "not_before",
        "lease_until",
        "finished_at",
        "outcome",
    ]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Read-only; tokens are issued by the API or ``manage.py issue_token``. Superusers only
    for now. The secret is never stored, so it cannot be shown."""

    list_display = ["prefix", "user", "name", "created_at", "expires_at", "revoked_at"]
    list_filter = ["revoked_at"]
    search_fields = ["prefix", "user__username", "name"]
    list_select_related = ["user"]
    exclude = ["digest"]
    actions = ["revoke"]

    def _superuser(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._superuser(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._superuser(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: Any) -> None:
        if not self._superuser(request):
            return
        tokens = list(queryset.filter(revoked_at__isnull=True))
        for token in tokens:
            token_revoke(token=token)
        messages.info(request, f"Revoked {len(tokens)} token(s).")
