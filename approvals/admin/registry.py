"""Django admin: finance admins edit their organisation's workflow templates and
delegations here; auditors read history. Every permission is approvals.access's answer:
``TenantScoped`` asks it for each action and shows only the user's own organisation's
rows; superusers alone see every organisation."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest

from .. import access
from ..activities.outbound import allow_list
from ..audit.admin import AuditExportAdmin
from ..models import (
    ActivityAttempt,
    ApiToken,
    Delegation,
    Department,
    ExchangeRate,
    OrgGroup,
    PendingTask,
    StartSchedule,
    Tenant,
    Timer,
    User,
    Workflow,
    WorkflowTemplate,
)
from ..runtime import tenant_scope
from ..selectors.templates import workflow_template_latest
from ..services.cron import Cron, CronInvalid
from ..services.delegations import DelegationRefused, delegation_check
from ..services.directory import DeactivationRefused, handover_summary, user_deactivate
from ..services.schedules import schedule_cron, schedule_plan
from ..services.tokens import token_revoke
from ..web import present
from ..words import zones
from .departments import DepartmentForm
from .labels import LabelledDateTimeAdmin
from .offboarding import OffboardingAdmin
from .operation_pages import WorkflowOperationsAdmin
from .rates import ExchangeRateForm, RatesAdmin
from .templates import PrettyJSONField
from .templates import WorkflowTemplateAdmin as WorkflowTemplateAdminBase
from .workflows import PeopleRowsAdmin, RequestRowsAdmin, TimerKindFilter, WorkflowPeopleAdmin


class TenantScoped(LabelledDateTimeAdmin):
    """Rows of the user's own organisation, with the rights access.admin_may gives.
    The tenant of a new row is the user's own; choices of people are the user's own
    organisation's."""

    def _model(self) -> str:
        return self.model._meta.model_name or ""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return access.admin_may(request.user, "view", self._model())

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return access.admin_may(request.user, "view", self._model()) and self._own(request, obj)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return access.admin_may(request.user, "add", self._model())

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return access.admin_may(request.user, "change", self._model()) and self._own(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return access.admin_may(request.user, "delete", self._model()) and self._own(request, obj)

    def _own(self, request: HttpRequest, obj: Any) -> bool:
        user: Any = request.user
        return obj is None or user.is_superuser or obj.tenant_id == user.tenant_id

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return access.admin_scope(request.user, super().get_queryset(request))

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> Any:
        excluded = list(super().get_exclude(request, obj) or [])
        user: Any = request.user
        if not user.is_superuser and "tenant" in [f.name for f in self.model._meta.fields]:
            excluded.append("tenant")
        return excluded

    def get_list_filter(self, request: HttpRequest) -> Any:
        filters = list(super().get_list_filter(request))
        user: Any = request.user
        return filters if user.is_superuser else [f for f in filters if f != "tenant"]

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        user: Any = request.user
        if not user.is_superuser:
            if db_field.related_model is User:
                kwargs["queryset"] = User.objects.filter(tenant_id=user.tenant_id, is_active=True)
            elif db_field.related_model is Tenant:
                kwargs["queryset"] = Tenant.objects.filter(pk=user.tenant_id)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        user: Any = request.user
        if not user.is_superuser:
            obj.tenant_id = user.tenant_id
        with as_member(request):
            super().save_model(request, obj, form, change)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with as_member(request):
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        with as_member(request):
            super().delete_queryset(request, queryset)


def as_member(request: HttpRequest) -> Any:
    """An organisation's staff write in the admin acting for their organisation (row-
    level security); a superuser's writes cross organisations on the login role."""
    user: Any = request.user
    return tenant_scope.atomic_for(None if user.is_superuser else user.tenant_id)


class SuperuserOnly(admin.ModelAdmin):
    """Organisations and people: the deployment's operators only."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return self.has_module_permission(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self.has_module_permission(request)


def _organisation_zones() -> list[tuple[str, str]]:
    return [("", "UTC (none chosen)"), *zones.zone_choices()]


class TenantForm(forms.ModelForm):
    time_zone = forms.ChoiceField(
        required=False,
        choices=_organisation_zones,
        label="Time zone",
        help_text="E-mails show times in this zone to people who chose none of their own.",
        error_messages={"invalid_choice": zones.ZONE_INVALID},
    )

    class Meta:
        model = Tenant
        fields = "__all__"

    def clean_outbound_hosts(self) -> str:
        text = self.cleaned_data.get("outbound_hosts") or ""
        try:
            allow_list(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return str(text)

    def clean_time_zone(self) -> str:
        value = str(self.cleaned_data.get("time_zone") or "")
        if value and zones.zone_named(value) is None:
            raise forms.ValidationError(zones.ZONE_INVALID)
        return value


@admin.register(Tenant)
class TenantAdmin(SuperuserOnly):
    """Organisations: the deployment's operators; an organisation admin opens her own
    to set the hosts its workflow templates may call, and nothing else."""

    list_display = ["name", "slug", "fallback_approver"]
    form = TenantForm

    def has_module_permission(self, request: HttpRequest) -> bool:
        return access.may_set_outbound_hosts(request.user)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return access.may_set_outbound_hosts(request.user, obj.pk if obj else None)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return access.may_set_outbound_hosts(request.user, obj.pk if obj else None)

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        user: Any = request.user
        qs = super().get_queryset(request)
        return qs if user.is_superuser else qs.filter(pk=user.tenant_id)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        user: Any = request.user
        if user.is_superuser:
            return super().get_fields(request, obj)
        return ["name", "time_zone", "template_four_eyes", "outbound_hosts"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        with as_member(request):  # an organisation admin's time zone or hosts
            super().save_model(request, obj, form, change)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        user: Any = request.user
        return [] if user.is_superuser else ["name"]

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        *args: Any,
        **kw: Any,
    ) -> Any:
        # An organisation is edited and left, not edited again at once; only after adding
        # one may another follow.
        context.update(show_save_and_continue=False, show_save_and_add_another=add)
        return super().render_change_form(request, context, add, *args, **kw)


@admin.register(User)
class ApprovalsUserAdmin(OffboardingAdmin, SuperuserOnly, UserAdmin):
    list_display = ["username", "tenant", "manager", "email", "is_active", "is_staff"]
    list_filter = ["tenant", "is_active", "is_staff"]
    fieldsets = (*UserAdmin.fieldsets, ("Organisation", {"fields": ("tenant", "manager")}))  # type: ignore[misc]
    actions = ["deactivate"]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Unticking "active" deactivates through the directory service, which hands
        the person's open tasks on; when nobody can take one, the person stays active."""
        leaving = change and "is_active" in form.changed_data and not obj.is_active
        if leaving:
            obj.is_active = True
        super().save_model(request, obj, form, change)
        if leaving:
            self._deactivate(request, obj)

    @admin.action(description="Deactivate the selected people and hand their tasks on")
    def deactivate(self, request: HttpRequest, queryset: Any) -> None:
        for person in queryset.filter(is_active=True).order_by("username"):
            self._deactivate(request, person)

    def _deactivate(self, request: HttpRequest, person: User) -> None:
        by = request.user if isinstance(request.user, User) else None
        try:
            result = user_deactivate(user=person, by=by, reason="deactivated in the admin")
        except DeactivationRefused as exc:
            messages.error(request, str(exc))
            return
        messages.info(request, handover_summary(result))


@admin.register(OrgGroup)
class OrgGroupAdmin(SuperuserOnly):
    list_display = ["name", "key", "tenant"]
    filter_horizontal = ["members"]


class DelegationForm(forms.ModelForm):
    # Set per request by DelegationAdmin.get_form: the person saving the delegation,
    # who may not make someone else's name them (access.may_delegate_for).
    maker: Any = None

    class Meta:
        model = Delegation
        fields = ["tenant", "user", "delegate", "starts_at", "ends_at", "reason"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        user, delegate = cleaned.get("user"), cleaned.get("delegate")
        if isinstance(user, User) and isinstance(delegate, User):
            try:
                delegation_check(user=user, delegate=delegate, maker=self.maker)
            except DelegationRefused as exc:
                raise forms.ValidationError({"delegate": str(exc)}) from exc
        return cleaned


@admin.register(Delegation)
class DelegationAdmin(PeopleRowsAdmin, TenantScoped):
    form = DelegationForm
    list_display = ["away", "stand_in", "starts", "ends", "reason", "set_up_by"]
    list_filter = ["tenant"]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        return type(form.__name__, (form,), {"maker": request.user})

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        # Who made it as it stands: shown to the person on their out-of-office page.
        if isinstance(request.user, User) and (not change or form.changed_data):
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(WorkflowTemplate)
class WorkflowTemplateAdmin(TenantScoped, WorkflowTemplateAdminBase):
    """Saving never edits a published version: it publishes the next one (see
    admin/templates.py). Changing one needs, besides the admin's right, the template's
    edit role (``access.edit_refusal``); who holds its roles is its roles screen
    (admin/template_roles.py)."""

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or access.may_edit_template(request.user, obj))

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> Any:
        if request.method == "POST" and object_id is not None:
            template = self.get_queryset(request).filter(pk=_pk(object_id)).first()
            refusal = access.edit_refusal(request.user, template) if template else None
            if template is not None and self.has_view_permission(request, template) and refusal:
                raise PermissionDenied(refusal)  # the 403 page says why, in words
        return super().changeform_view(request, object_id, form_url, extra_context)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _pk(value: str) -> int:
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else 0


SCHEDULE_TEMPLATE_UNKNOWN = "Your organisation has no published workflow template {key!r}."
SCHEDULE_SUBMITTER_NOT_MAKER = (
    "A schedule files its requests in the name of the person who makes it, so it cannot "
    "file them as {name}: leave this as yourself."
)
SCHEDULE_MAKER_OUTSIDE = (
    "A schedule files its requests in the name of the person who makes it: sign in as a "
    "member of that organisation to make one there."
)


class StartScheduleForm(forms.ModelForm):
    data = PrettyJSONField(  # type: ignore[assignment]
        required=False, help_text="The data every start gets, as a JSON object."
    )
    # Set per request by StartScheduleAdmin.get_form: the person saving the schedule,
    # in whose name it files its requests.
    maker: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields.get("submitter")
        if field is not None:
            field.required = False
            field.help_text = (
                "Requests are filed in the name of whoever saves the schedule (you); "
                "they may not decide any step of them."
            )
            if self.maker is not None and self.instance.pk is None:
                self.initial.setdefault("submitter", self.maker.pk)

    class Meta:
        model = StartSchedule
        fields = [
            "tenant",
            "name",
            "template_key",
            "subject_type",
            "subject_id",
            "data",
            "submitter",
            "cron",
            "timezone",
            "enabled",
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        cron, zone = cleaned.get("cron"), cleaned.get("timezone")
        if cron and zone:
            try:
                Cron.parse(cron, zone)
            except CronInvalid as exc:
                self.add_error("timezone" if exc.field == "timezone" else "cron", str(exc))
        self._check_submitter(cleaned)
        return cleaned

    def _check_submitter(self, cleaned: dict[str, Any]) -> None:
        maker = self.maker
        if maker is None:
            return
        submitter = cleaned.get("submitter")
        if submitter is not None and submitter.pk != maker.pk:
            name = submitter.get_full_name() or submitter.username
            self.add_error("submitter", SCHEDULE_SUBMITTER_NOT_MAKER.format(name=name))
        tenant = cleaned.get("tenant")
        tenant_id = tenant.pk if tenant is not None else maker.tenant_id
        if tenant_id is None or tenant_id != maker.tenant_id:
            self.add_error(None, SCHEDULE_MAKER_OUTSIDE)

    def clean_data(self) -> Any:
        value = self.cleaned_data.get("data")
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError("Give a JSON object.")
        return value


@admin.register(StartSchedule)
class StartScheduleAdmin(TenantScoped):
    """A workflow template started on a schedule. The next start is planned on save;
    each period starts once (``services.schedules``)."""

    form = StartScheduleForm
    list_display = [
        "name",
        "template_key",
        "cron",
        "next_start",
        "enabled",
        "last_due_at",
        "last_workflow",
        "last_error",
        "owner",
    ]
    list_filter = ["tenant", "enabled", "template_key"]
    readonly_fields = ["owner", "next_start", "last_due_at", "last_workflow", "last_error"]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        return type(form.__name__, (form,), {"maker": request.user})

    @admin.display(description="Next start")
    def next_start(self, obj: StartSchedule) -> str:
        if not obj.enabled or obj.next_due_at is None:
            return "Not scheduled"
        local = obj.next_due_at.astimezone(schedule_cron(obj).zone)
        return f"{local:%a %d %b %Y, %H:%M} ({obj.timezone})"

    def save_model(self, request: HttpRequest, obj: StartSchedule, form: Any, change: bool) -> None:
        user: Any = request.user
        tenant_id = obj.tenant_id if user.is_superuser else user.tenant_id
        if workflow_template_latest(tenant_id=tenant_id, key=obj.template_key) is None:
            # Checked here, where the organisation is known; the form has no tenant field
            # for organisation staff. The row is saved disabled, and the message says why.
            obj.enabled = False
            messages.warning(request, SCHEDULE_TEMPLATE_UNKNOWN.format(key=obj.template_key))
        if not change or {"cron", "timezone", "enabled"} & set(form.changed_data):
            schedule_plan(schedule=obj)
        # Whoever saves a schedule answers for it: its requests are filed in their name.
        obj.owner = obj.submitter = user
        super().save_model(request, obj, form, change)


@admin.register(ExchangeRate)
class ExchangeRateAdmin(RatesAdmin, TenantScoped):
    """Finance admins' rates to the organisation's base currency, one at a time or from
    a CSV file (admin/rates.py); auditors read them."""

    form = ExchangeRateForm
    list_display = ["currency", "on", "rate_shown"]  # the base is the sentence above
    list_filter = ["tenant", "currency"]
    date_hierarchy = "on"
    change_list_template = "admin/approvals/exchangerate/change_list.html"

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        user: Any = request.user
        tenant_id = obj.tenant_id if obj is not None else user.tenant_id
        organisation = Tenant.objects.filter(pk=tenant_id).first()
        return type(form.__name__, (form,), {"organisation": organisation})

    @admin.display(description="Rate", ordering="rate")
    def rate_shown(self, obj: ExchangeRate) -> str:
        return present.rate_figure(str(obj.rate))

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        user: Any = request.user
        tenant = Tenant.objects.filter(pk=user.tenant_id).first()
        context = {**(extra_context or {}), "organisation": tenant}
        return super().changelist_view(request, context)


@admin.register(Department)
class DepartmentAdmin(TenantScoped):
    """The departments a request's department field offers, kept by finance and
    organisation admins (admin/departments.py)."""

    form = DepartmentForm
    list_display = ["name", "key"]
    list_filter = ["tenant"]
    search_fields = ["name", "key"]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        user: Any = request.user
        tenant_id = obj.tenant_id if obj is not None else user.tenant_id
        return type(form.__name__, (form,), {"organisation_id": tenant_id})


class ReadOnlyAdmin(TenantScoped):
    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Workflow)
class WorkflowAdmin(AuditExportAdmin, WorkflowOperationsAdmin, WorkflowPeopleAdmin, ReadOnlyAdmin):
    """Read-only: what an organisation admin may do to a workflow is on its operations
    page (operation_pages.py), through the command path. The list and the view read as the
    app does (workflows.py)."""


@admin.register(PendingTask)
class PendingTaskAdmin(RequestRowsAdmin, ReadOnlyAdmin):
    list_display = ["request", "step_words", "holder", "behalf", "handed_on", "due"]
    list_select_related = ["workflow__template", "assignee"]


@admin.register(Timer)
class TimerAdmin(RequestRowsAdmin, ReadOnlyAdmin):
    list_display = ["request", "step_words", "kind_words", "fires", "fired", "failures", "stopped"]
    list_filter = [TimerKindFilter, "dead_at"]


@admin.register(ActivityAttempt)
class ActivityAttemptAdmin(RequestRowsAdmin, ReadOnlyAdmin):
    list_display = [
        "request",
        "step_words",
        "activity_words",
        "attempt",
        "not_before_at",
        "finished",
        "outcome_words",
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
