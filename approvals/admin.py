"""Django admin: finance admins edit workflow templates here; auditors read history."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.forms.fields import InvalidJSONInput
from django.http import HttpRequest
from guardian.admin import GuardedModelAdmin

from templates_engine import Definition, DefinitionError

from . import json_input
from .models import (
    ActivityAttempt,
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


class LimitedJSONFormField(forms.JSONField):
    """JSON within ``json_input``'s limits: too deep a document would otherwise blow
    ``json.loads``'s recursion (a 500), and PostgreSQL refuses a NUL in jsonb."""

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            try:
                json_input.loads(value)
            except json_input.JsonInputError as exc:
                raise forms.ValidationError(str(exc)) from exc
            except ValueError:
                pass  # not JSON at all: the parent says so in its own words
        return super().to_python(value)

    def bound_data(self, data: Any, initial: Any) -> Any:
        if isinstance(data, str) and json_input.nesting_depth_exceeds(data):
            return InvalidJSONInput(data)  # shown back as typed, never parsed
        return super().bound_data(data, initial)


class WorkflowTemplateForm(forms.ModelForm):
    definition = LimitedJSONFormField()

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
