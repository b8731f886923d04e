"""Workflow templates in the admin, for finance admins: a structured editor (or the
JSON, one click away), publishing checked against the organisation, the versions with
who published each and how many workflows run on it, a diff between any two, "try it"
on sample data, the flow as a diagram, retire and roll back.

Every page asks access.py through the ModelAdmin's permissions (TenantScoped): viewing
needs ``view`` on workflow templates, publishing, retiring and rolling back ``change``;
every version shown is of the user's own organisation."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.forms.fields import InvalidJSONInput
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django_jsonform.widgets import JSONFormWidget

from templates_engine import TERMINAL

from .. import access, clock, json_input
from ..activities import activity_names
from ..models import OrgGroup, User, WorkflowTemplate, WorkflowTemplateDraft
from ..selectors.departments import kept_lists
from ..selectors.people import people_matching
from ..selectors.template_trial import Trial, workflow_template_try
from ..selectors.templates import (
    workflow_template_drafts_open,
    workflow_template_four_eyes,
    workflow_template_latest,
    workflow_template_problems,
    workflow_template_versions,
)
from ..services.templates import (
    AlreadyRetired,
    DefinitionRefused,
    DraftRefused,
    workflow_template_draft_discard,
    workflow_template_draft_publish,
    workflow_template_draft_save,
    workflow_template_publish,
    workflow_template_retire,
    workflow_template_rollback,
)
from ..web import condition_form, present, step_cards
from ..web.definition_changes import definition_changes
from ..web.definition_diff import DiffLine, definition_diff, pretty
from ..web.definition_editor import (
    EDITOR_UNREADABLE,
    EditorShapeError,
    complete,
    editor_schema,
    error_map,
    from_editor,
    sample_data,
    to_editor,
)
from ..web.definition_problems import Problem, problems_in_words
from ..web.diagram import workflow_svg
from ..web.editor_page import (
    approver_picker,
    base_currency,
    editor_context,
    first_names,
    retire_effect,
    rollback_effect,
)
from ..web.forms import SchemaForm
from ..web.story import names_in
from ..web.template_trial_words import trial_end, trial_rows, trial_usernames
from .confirm import CONFIRMED as CONFIRMED_YES
from .confirm import CONFIRMED_FIELD, confirm_page, confirmed
from .offboarding import QUERY_INVALID
from .template_roles import TemplateRolesAdmin

PREVIEW_NOTE = "Preview only: nothing is published until you press Save."
NOT_AN_OBJECT = "The definition must be a JSON object."
BAD_TRY_DATA = "The sample data must be a JSON object: {problem}"
UNKNOWN_SUBMITTER = "Pick a submitter of this organisation."
SAME_AS_NEWEST = "Version {version} reads as the newest version does: nothing to publish."
DIFF_VERSION_UNKNOWN = "Choose the versions to compare by their numbers, from 1 to {last}."
SAVING_PUBLISHES = "Saving publishes the next version; workflows already running keep theirs."
SAVING_DRAFTS = "Saving keeps a draft: another finance admin reads what changes and publishes it."
PUBLISH_ASKS_FIRST = (
    "Saving publishes at once, with no second person reviewing it: confirm that you "
    "want to publish it now."
)
PUBLISH_CONSEQUENCE = (
    "Publish this change now? New requests follow it at once, and no second person reviews"
    " it first (four eyes on rules are off for your organisation). Requests already"
    " running keep their version."
)
DRAFT_SAVED = (
    "Saved as a draft: nothing is published until another finance admin reads what "
    "changes and publishes it."
)
DRAFT_PUBLISHED_LOG = (
    "Published version {version}, drafted by {drafter} and published by {publisher}."
)
DRAFT_DISCARDED = "The draft was discarded; nothing was published."
DRAFT_PUBLISH_QUESTION = (
    "Publish the change to {title}? New requests follow it at once; requests already"
    " running keep their version."
)
STEPS_RESHAPED = "The steps changed on this page only: nothing is saved until you press Save."
CONFIRMED = "publish_confirmed"
NOTHING_CHANGED = "Nothing changed from version {version}, so nothing was published."
TRY_FORM_INVALID = "The sample request has a mistake; see the fields under Try it."
TRY_PREFIX = "try"
STARTER = {"key": "", "title": "", "steps": []}
AS_JSON = "as"  # ?as=json: the pretty-printed JSON instead of the structured editor


class PrettyJSONField(forms.JSONField):
    """The definition as indented JSON, within ``json_input``'s limits: too deep a
    document would otherwise blow ``json.loads``'s recursion (a 500), and PostgreSQL
    refuses a NUL in jsonb."""

    def bound_data(self, data: Any, initial: Any) -> Any:
        if isinstance(data, str) and json_input.nesting_depth_exceeds(data):
            return InvalidJSONInput(data)  # shown back as typed, never parsed
        if isinstance(data, str):
            # Shown back as typed too when the limits refuse it: parsed, a lone
            # surrogate could not be written into the page (a 500).
            try:
                json_input.loads(data)
            except json_input.JsonInputError:
                return InvalidJSONInput(data)
            except ValueError:
                pass
        return super().bound_data(data, initial)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, dict | list):
            return json.dumps(value, indent=2, ensure_ascii=False)
        return super().prepare_value(value)

    def to_python(self, value: Any) -> Any:
        if isinstance(value, str) and value.strip():
            try:
                json_input.loads(value)
            except json_input.JsonInputError as exc:
                raise forms.ValidationError(str(exc)) from exc
            except ValueError:
                pass  # not JSON at all: the parent says so in its own words
        return super().to_python(value)


def submitter_choices(tenant_id: int) -> list[tuple[str, str]]:
    """The people "try it" may submit as, by their names (in name order); two people of
    one name are told apart by their e-mail addresses. The value is the username."""
    people = list(
        User.objects.filter(tenant_id=tenant_id, is_active=True).only(
            "username", "first_name", "last_name", "email"
        )
    )
    named = [(p, p.get_full_name() or p.email or p.username) for p in people]
    counts = Counter(name for _, name in named)
    choices = [
        (p.username, f"{name} ({p.email})" if counts[name] > 1 and p.email else name)
        for p, name in named
    ]
    return sorted(choices, key=lambda c: (c[1].casefold(), c[0]))


class WorkflowTemplateForm(forms.ModelForm):
    """Publishes the next version. ``tenant_id``, ``previous`` (the version edited) and
    ``as_json`` are set by ``WorkflowTemplateAdmin.get_form``."""

    definition = PrettyJSONField()
    try_submitter = forms.ChoiceField(
        required=False, label="Try it as", help_text="Who submits, in the preview."
    )
    try_late = forms.BooleanField(
        required=False,
        label="Someone is late",
        help_text=(
            "Off: everyone acts as soon as they are asked. On: no one acts until the "
            "reminders, deadline and escalation of their step have passed."
        ),
    )
    try_data = forms.CharField(
        required=False,
        label="with data",
        widget=forms.Textarea(attrs={"rows": 4, "class": "vLargeTextField"}),
        help_text="Sample workflow data (JSON), for the preview.",
    )

    tenant_id: int = 0  # set by get_form
    picker: step_cards.Picker | None = None  # whom the step cards offer (not as JSON)
    activities: list[str] = []
    four_eyes = True  # set by get_form: the organisation's four eyes on rules
    viewer = ""
    editor: Any = None  # set by get_form: the person saving, asked access.edit_refusal
    previous: dict[str, Any] | None = None
    as_json = False

    class Meta:
        model = WorkflowTemplate
        fields = ["tenant", "definition"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.preview: dict[str, Any] | None = None
        base = self.previous or STARTER
        users = list(
            User.objects.filter(tenant_id=self.tenant_id, is_active=True)
            .order_by("username")
            .values_list("username", flat=True)
        )
        if self.as_json:
            self.fields["definition"].widget = forms.Textarea(attrs={"class": "wt-json"})
            self.initial["definition"] = base
        else:
            groups = list(
                OrgGroup.objects.filter(tenant_id=self.tenant_id)
                .order_by("key")
                .values_list("key", flat=True)
            )
            self.activities = list(activity_names())
            schema = editor_schema(groups=groups, users=users, activities=self.activities)
            del schema["properties"]["steps"]  # the steps are cards (web/step_cards.py)
            self.fields["definition"].widget = JSONFormWidget(schema=schema)
            self.initial["definition"] = complete(to_editor(base), schema)
            self.picker = approver_picker(
                self.tenant_id, step_cards.kept_values(base.get("steps") or [])
            )
        self.fields["definition"].help_text = SAVING_DRAFTS if self.four_eyes else SAVING_PUBLISHES
        choice: Any = self.fields["try_submitter"]
        choice.choices = submitter_choices(self.tenant_id)
        self.initial.setdefault("try_data", json.dumps(sample_data(base)))
        self.initial.setdefault("try_submitter", self.viewer)
        self.edited: dict[str, Any] | None = None  # the definition posted, once read
        self.reshaped = False  # a step card was added or removed
        self.sample: dict[str, Any] = {}  # the data and submitter "try it" ran with
        self.condition_errors: dict[str, str] = {}
        self.problems: list[Any] = []
        self.try_form = self._try_form(base)

    def _try_form(self, definition: dict[str, Any]) -> SchemaForm:
        """The form employees fill in, built from ``definition``'s schema, in currency
        units: the sample request of "try it"."""
        schema = definition.get("schema") if isinstance(definition.get("schema"), dict) else None
        posted = any(k.startswith(f"{TRY_PREFIX}-") for k in self.data)
        return SchemaForm(
            schema,
            self.data if posted else None,
            prefix=TRY_PREFIX,
            with_reference=False,
            initial=sample_data(definition),
        )

    def _tenant_id(self) -> int:
        tenant = self.cleaned_data.get("tenant")
        return int(tenant.pk) if tenant is not None else self.tenant_id

    def clean_definition(self) -> Any:
        doc = self.cleaned_data["definition"]
        if not isinstance(doc, dict):
            raise forms.ValidationError(NOT_AN_OBJECT)
        definition = doc if self.as_json else self._from_editor(doc)
        if not self.as_json:
            definition, self.condition_errors = condition_form.apply(
                definition, self.data, base=base_currency(self._tenant_id())
            )
            self.edited = definition
            if step_cards.reshaping(self.data):
                return definition  # checked when previewed or saved, not half-made
            if self.condition_errors:
                raise forms.ValidationError(list(self.condition_errors.values()))
        key = definition.get("key")
        latest = (
            workflow_template_latest(tenant_id=self._tenant_id(), key=key)
            if isinstance(key, str) and self.editor is not None
            else None
        )
        refusal = access.edit_refusal(self.editor, latest) if latest is not None else None
        if refusal is not None:  # an existing template's key, named by someone not its editor
            raise forms.ValidationError(refusal)
        problems = workflow_template_problems(tenant_id=self._tenant_id(), doc=definition)
        if problems:
            widget = self.fields["definition"].widget
            if isinstance(widget, JSONFormWidget):
                widget.add_error(error_map(problems, doc))
            self.problems = problems_in_words(problems, definition)
            raise forms.ValidationError([p.text for p in self.problems])
        return definition

    def cards(self) -> list[step_cards.Card]:
        """The step cards: of the steps as edited (posted, a card added or removed),
        else of the version edited."""
        base = self.edited or self.previous or STARTER
        words = self.picker.words() if self.picker is not None else {}
        return step_cards.cards(to_editor(base).get("steps") or [], words)

    def _from_editor(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The definition the structured editor's document stands for. The page's script
        sends it in one shape; anything else posted is a form error, never a 500."""
        try:
            if step_cards.posted(self.data):
                assert self.picker is not None
                doc = {**doc, "steps": step_cards.steps_from_post(self.data, self.picker)}
            return from_editor(doc, self.previous)
        except EditorShapeError as exc:
            self.problems = [Problem(str(exc), "steps")]
            raise forms.ValidationError(str(exc)) from exc
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            raise forms.ValidationError(EDITOR_UNREADABLE) from exc

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if step_cards.reshaping(self.data) and not self.errors:
            self.reshaped = True
            self.add_error(None, STEPS_RESHAPED)  # invalid on purpose: nothing is saved
            return cleaned
        saving = "_preview" not in self.data and not self.errors
        if saving and not self.four_eyes and self.data.get(CONFIRMED) != "yes":
            self.add_error(None, PUBLISH_ASKS_FIRST)  # the page's dialog asks first
        if "_preview" in self.data and "definition" in cleaned and not self.errors:
            self.preview = self._preview(cleaned["definition"])
            if self.preview is not None:
                # Invalid on purpose, so nothing is saved; the page shows the preview.
                self.add_error(None, PREVIEW_NOTE)
        return cleaned

    def _preview(self, definition: dict[str, Any]) -> dict[str, Any] | None:
        trial, field, problem = self.trial(definition)
        if problem:
            self.add_error(field, problem)
            return None
        return {
            "diff": definition_diff(self.previous or {}, definition),
            "changes": changes_in_words(self._tenant_id(), self.previous or {}, definition),
            "trial": trial,
            "definition": definition,
        }

    def trial(self, definition: dict[str, Any]) -> tuple[Trial | None, str | None, str]:
        """The try-it run of ``definition`` with the form's sample data and submitter,
        or the field at fault and the problem."""
        self.try_form = self._try_form(definition)
        if self.try_form.is_bound:
            if not self.try_form.is_valid():
                return None, None, TRY_FORM_INVALID
            data = self.try_form.data_for_engine()
        else:  # the JSON page, and API-minded callers, still send the data as JSON
            try:
                data = json_input.loads(self.cleaned_data.get("try_data") or "{}")
            except ValueError as exc:
                return None, "try_data", BAD_TRY_DATA.format(problem=exc)
            if not isinstance(data, dict):
                return None, "try_data", BAD_TRY_DATA.format(problem="not an object")
        submitter = User.objects.filter(
            tenant_id=self._tenant_id(),
            is_active=True,
            username=self.cleaned_data.get("try_submitter"),
        ).first()
        if submitter is None:
            return None, "try_submitter", UNKNOWN_SUBMITTER
        trial = workflow_template_try(
            tenant_id=submitter.tenant_id or 0,
            definition=definition,
            data=data,
            submitter=submitter,
            prompt=not self.cleaned_data.get("try_late"),
        )
        self.sample = {"data": data, "submitter": submitter}
        return trial, "", ""


def diff_context(lines: list[DiffLine], changes: list[str]) -> dict[str, Any]:
    return {
        "changes": changes,
        "lines": lines,
        "added": sum(1 for line in lines if line.kind == "add"),
        "removed": sum(1 for line in lines if line.kind == "del"),
    }


def changes_in_words(tenant_id: int, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``definition_changes`` with the named approvers by their first names and the
    groups by their names."""
    return definition_changes(
        old, new, names=first_names(tenant_id, old, new), base=base_currency(tenant_id)
    )


def _diagram(template: WorkflowTemplate) -> Any:
    """The version's diagram, the people its approval steps name by their first names."""
    return draft_diagram(template.tenant_id, template.definition)


def draft_diagram(tenant_id: int, definition: dict[str, Any]) -> Any:
    return workflow_svg(
        definition,
        data={},
        names=first_names(tenant_id, definition),
        base=base_currency(tenant_id),
    )


def trial_context(
    trial: Trial | None,
    definition: dict[str, Any],
    tenant_id: int,
    sample: dict[str, Any] | None = None,
    late: bool = False,
) -> dict[str, Any]:
    """The run in words, and the sample it ran with (who submitted, the data by label)."""
    if trial is None:
        return {}
    names = {
        **first_names(tenant_id, definition),
        **names_in(tenant_id, trial_usernames(trial)),
    }
    sample = sample or {}
    schema = definition.get("schema") if isinstance(definition.get("schema"), dict) else None
    submitter = sample.get("submitter")
    return {
        "trial": trial,
        "trial_rows": trial_rows(trial, definition, clock.now(), names),
        "trial_end": trial_end(trial.status),
        "trial_late": late,
        "trial_submitter": (submitter.get_full_name() or submitter.username) if submitter else "",
        "trial_sample": present.data_rows(
            schema, sample.get("data") or {}, kept_lists(tenant_id=tenant_id)
        ),
    }


class WorkflowTemplateAdmin(TemplateRolesAdmin, admin.ModelAdmin):
    """Mixed into registry.py's TenantScoped registration (see registry.py). Saving never
    edits a published version: it publishes the next one. Who may start, edit and see
    the requests of a template is its roles screen (admin/template_roles.py)."""

    form = WorkflowTemplateForm
    list_display = [
        "key",
        "version",
        "title",
        "published_at",
        "published_by",
        "running",
        "retired",
    ]
    list_filter = ["tenant", "key"]
    change_form_template = "admin/approvals/workflowtemplate/change_form.html"

    # -- the list -----------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        running = Count("workflow", filter=~Q(workflow__status__in=TERMINAL))
        return super().get_queryset(request).annotate(running_count=running)

    @admin.display(description="running", ordering="running_count")
    def running(self, obj: Any) -> int:
        return int(getattr(obj, "running_count", 0))

    @admin.display(description="retired", boolean=True)
    def retired(self, obj: WorkflowTemplate) -> bool:
        return obj.retired_at is not None

    def get_list_display(self, request: HttpRequest) -> Any:
        user: Any = request.user
        return [*self.list_display, "tenant"] if user.is_superuser else self.list_display

    # -- the form -----------------------------------------------------------------------

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kw: Any
    ) -> Any:
        user: Any = request.user
        form = super().get_form(request, obj, change=change, **kw)
        tenant_id = obj.tenant_id if obj is not None else user.tenant_id
        attrs = {
            "tenant_id": tenant_id,
            "four_eyes": workflow_template_four_eyes(tenant_id=tenant_id),
            "previous": obj.definition if obj is not None else None,
            "as_json": request.GET.get(AS_JSON) == "json",
            "viewer": user.get_username(),
            "editor": user,
        }
        return type(form.__name__, (form,), attrs)

    @admin.display(description="Definition")
    def pretty_definition(self, obj: WorkflowTemplate) -> Any:
        return format_html('<pre class="wt-pretty">{}</pre>', pretty(obj.definition))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and not self.has_change_permission(request, obj):
            return ["pretty_definition"]  # readers see the definition, not a form
        return super().get_readonly_fields(request, obj)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and not self.has_change_permission(request, obj):
            return [(None, {"fields": ["pretty_definition"]})]
        user: Any = request.user
        main = ["tenant", "definition"] if user.is_superuser else ["definition"]
        if request.GET.get(AS_JSON) != "json":
            return [(None, {"fields": main})]  # the page draws "try it" with the form
        return [
            (None, {"fields": main}),
            ("Try it", {"fields": ["try_submitter", "try_late", "try_data"]}),
        ]

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Any = None,
    ) -> Any:
        form = context["adminform"].form
        if form.reshaped:
            context["errors"] = None  # the note that keeps it unsaved is not an error
        if form.preview is not None:
            context["errors"] = None  # the note that keeps it unsaved is not an error
            context["preview"] = form.preview
            context.update(diff_context(form.preview["diff"], form.preview["changes"]))
            context.update(
                trial_context(
                    form.preview["trial"],
                    form.preview["definition"],
                    form._tenant_id(),
                    form.sample,
                    bool(form.cleaned_data.get("try_late")),
                )
            )
            context["preview_diagram"] = draft_diagram(
                form._tenant_id(), form.preview["definition"]
            )
        if obj is not None:
            context["versions"] = workflow_template_versions(tenant_id=obj.tenant_id, key=obj.key)
            context["diagram"] = _diagram(obj)
            context["newest"] = context["versions"][0].pk == obj.pk
        user: Any = request.user
        if obj is not None and access.admin_may(user, "change", "workflowtemplate"):
            context["edit_refusal"] = access.edit_refusal(user, obj)
        context["as_json"] = form.as_json
        context["four_eyes"] = form.four_eyes
        context["publish_consequence"] = PUBLISH_CONSEQUENCE
        if obj is not None:
            context["drafts"] = workflow_template_drafts_open(tenant_id=obj.tenant_id, key=obj.key)
        context.update(editor_context(form, obj, request.GET.get("part", "")))
        return super().render_change_form(request, context, add, change, form_url, obj)

    def save_model(
        self, request: HttpRequest, obj: WorkflowTemplate, form: Any, change: bool
    ) -> None:
        user: Any = request.user
        tenant = form.cleaned_data["tenant"] if user.is_superuser else user.tenant
        if change and form.cleaned_data["definition"] == form.previous:
            messages.info(request, NOTHING_CHANGED.format(version=obj.version))
            return  # the page opens again on the version edited
        person = request.user if isinstance(request.user, User) else None
        if form.four_eyes:
            obj._draft = workflow_template_draft_save(  # type: ignore[attr-defined]
                tenant=tenant,
                definition=form.cleaned_data["definition"],
                drafted_by=person,
                based_on=obj if change else None,
            )
            messages.info(request, DRAFT_SAVED)
            return
        published = workflow_template_publish(
            tenant=tenant, definition=form.cleaned_data["definition"], published_by=person
        )
        obj.pk = published.pk
        obj.refresh_from_db()
        messages.info(
            request,
            f"Published {published.key} version {published.version}; "
            "running workflows keep the version they started with.",
        )

    def log_addition(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        if getattr(obj, "_draft", None) is None:  # a draft is logged when published
            return super().log_addition(request, obj, message)
        return None

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        if getattr(obj, "_draft", None) is None:
            return super().log_change(request, obj, message)
        return None

    def response_change(self, request: HttpRequest, obj: WorkflowTemplate) -> HttpResponse:
        return self._after_save(obj)

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: Any = None) -> Any:
        return self._after_save(obj)

    def _after_save(self, obj: WorkflowTemplate) -> HttpResponseRedirect:
        draft = getattr(obj, "_draft", None)
        if draft is not None:
            return HttpResponseRedirect(
                reverse("admin:approvals_workflowtemplate_draft", args=[draft.pk])
            )
        return self._to(obj)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # a published version has nothing related to save

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    # -- the pages of their own ---------------------------------------------------------

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        name = "approvals_workflowtemplate"
        own = [
            path("<int:pk>/diff/", view(self.diff_view), name=f"{name}_diff"),
            path("<int:pk>/try/", view(self.try_view), name=f"{name}_try"),
            # a draft read in words, then published by a second finance admin
            path("drafts/<int:draft_id>/", view(self.draft_view), name=f"{name}_draft"),
            # GET asks first, naming the effect; POST acts
            path("<int:pk>/retire/", view(self.retire_view), name=f"{name}_retire"),
            path("<int:pk>/rollback/", view(self.rollback_view), name=f"{name}_rollback"),
            # the step cards' approver boxes: people who can approve, found by name
            path("approvers/", view(self.approvers_view), name=f"{name}_approvers"),
        ]
        return own + self.role_urls() + super().get_urls()

    def approvers_view(self, request: HttpRequest) -> HttpResponse:
        """Suggestions for a step card's approver box (``?q=``): at most ten of the
        people who can approve, found by name; never the whole organisation."""
        user: Any = request.user
        if not access.admin_may(user, "change", "workflowtemplate") or user.tenant_id is None:
            raise PermissionDenied
        text = request.GET.get("q", "").strip()
        if not 1 <= len(text) <= 100 or "\x00" in text:
            return JsonResponse({"error": QUERY_INVALID}, status=400)
        found = people_matching(access.approver_candidates(user.tenant_id), text)
        return JsonResponse(
            {"people": [{"username": c.username, "name": c.name, "label": c.label} for c in found]}
        )

    def _version(self, request: HttpRequest, pk: int, action: str) -> WorkflowTemplate:
        template = self.get_queryset(request).filter(pk=pk).first()
        if template is None:
            raise Http404("No such workflow template version.")
        allowed = (
            self.has_change_permission(request, template)
            if action == "change"
            else self.has_view_permission(request, template)
        )
        if not allowed:
            refusal = access.edit_refusal(request.user, template) if action == "change" else None
            raise PermissionDenied(refusal or "")
        return template

    def _to(self, template: WorkflowTemplate) -> HttpResponseRedirect:
        return HttpResponseRedirect(
            reverse("admin:approvals_workflowtemplate_change", args=[template.pk])
        )

    def _page(self, request: HttpRequest, template: WorkflowTemplate, **extra: Any) -> Any:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": template,
            "versions": workflow_template_versions(tenant_id=template.tenant_id, key=template.key),
            **extra,
        }
        return context

    def diff_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        template = self._version(request, pk, "view")
        versions = workflow_template_versions(tenant_id=template.tenant_id, key=template.key)
        by_number = {v.version: v for v in versions}
        asked = {name: request.GET.get(name) for name in ("a", "b")}
        unknown = any(v is not None and _int(v) not in by_number for v in asked.values())
        if unknown:  # shown above the default comparison, answered 400
            messages.error(request, DIFF_VERSION_UNKNOWN.format(last=max(by_number)))
        new = by_number.get(_int(asked["b"]), template)
        older = [v for v in versions if v.version < new.version]
        old = by_number.get(_int(asked["a"]), older[0] if older else new)
        lines = definition_diff(old.definition, new.definition)
        context = self._page(
            request,
            template,
            title=f"{template.key}: version {old.version} against version {new.version}",
            old=old,
            new=new,
            **diff_context(
                lines, changes_in_words(template.tenant_id, old.definition, new.definition)
            ),
        )
        return TemplateResponse(
            request,
            "admin/approvals/workflowtemplate/diff.html",
            context,
            status=400 if unknown else 200,
        )

    def try_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        template = self._version(request, pk, "view")
        form_class = self.get_form(request, template, change=True)
        data = request.POST if request.method == "POST" else None
        form = form_class(
            data, instance=template, initial={"try_data": pretty(sample_data(template.definition))}
        )
        extra: dict[str, Any] = {}
        if data is not None:
            late = data.get("try_late") == "on"
            form.cleaned_data = {
                "try_data": data.get("try_data", ""),
                "try_submitter": data.get("try_submitter", ""),
                "try_late": late,
            }
            trial, _, problem = form.trial(template.definition)
            trial_words = trial_context(
                trial, template.definition, template.tenant_id, form.sample, late
            )
            extra = {"problem": problem, **trial_words}
        context = self._page(
            request,
            template,
            title=f"Try {template.key} version {template.version}",
            form=form,
            diagram=_diagram(template),
            **extra,
        )
        return TemplateResponse(request, "admin/approvals/workflowtemplate/try.html", context)

    def _draft(self, request: HttpRequest, draft_id: int) -> WorkflowTemplateDraft:
        user: Any = request.user
        if not self.has_change_permission(request):
            raise PermissionDenied
        drafts = WorkflowTemplateDraft.objects.select_related("drafted_by", "based_on", "tenant")
        if not user.is_superuser:
            drafts = drafts.filter(tenant_id=user.tenant_id)
        draft = drafts.filter(pk=draft_id).first()
        if draft is None:
            raise Http404("No such draft.")
        if draft.based_on is not None:
            refusal = access.edit_refusal(user, draft.based_on)
            if refusal is not None:
                raise PermissionDenied(refusal)
        return draft

    def draft_view(self, request: HttpRequest, draft_id: int) -> HttpResponse:
        draft = self._draft(request, draft_id)
        if request.method == "POST":
            return self._close_draft(request, draft)
        newest = workflow_template_versions(tenant_id=draft.tenant_id, key=draft.key)
        base = draft.based_on.definition if draft.based_on else {}
        lines = definition_diff(base, draft.definition)
        viewer: Any = request.user
        own = draft.drafted_by_id == viewer.pk and workflow_template_four_eyes(
            tenant_id=draft.tenant_id
        )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"Review the change to {draft.definition.get('title') or draft.key}",
            "draft": draft,
            "newest": newest[0] if newest else None,
            "next_version": (newest[0].version + 1) if newest else 1,
            "own": own,
            "open": draft.closed_at is None,
            "publish_question": DRAFT_PUBLISH_QUESTION.format(
                title=draft.definition.get("title") or draft.key
            ),
            **diff_context(lines, changes_in_words(draft.tenant_id, base, draft.definition)),
        }
        return TemplateResponse(request, "admin/approvals/workflowtemplate/draft.html", context)

    def _close_draft(self, request: HttpRequest, draft: WorkflowTemplateDraft) -> HttpResponse:
        person: Any = request.user
        back = HttpResponseRedirect(
            reverse("admin:approvals_workflowtemplate_draft", args=[draft.pk])
        )
        if "_discard" not in request.POST and not confirmed(request):
            # without the page's script: a page of its own asks first
            title = draft.definition.get("title") or draft.key
            return confirm_page(
                request,
                admin_site=self.admin_site,
                opts=self.model._meta,
                title=f"Publish {title}?",
                question=DRAFT_PUBLISH_QUESTION.format(title=title),
                action="Publish it",
                back=request.path,
            )
        try:
            if "_discard" in request.POST:
                workflow_template_draft_discard(
                    tenant=draft.tenant, draft_id=draft.pk, discarded_by=person
                )
                messages.info(request, DRAFT_DISCARDED)
                return back
            published = workflow_template_draft_publish(
                tenant=draft.tenant, draft_id=draft.pk, published_by=person
            )
        except (DraftRefused, DefinitionRefused, access.Forbidden) as exc:
            messages.error(request, str(exc))
            return back
        drafter = draft.drafted_by.get_full_name() if draft.drafted_by else "someone since gone"
        note = DRAFT_PUBLISHED_LOG.format(
            version=published.version,
            drafter=drafter or getattr(draft.drafted_by, "username", ""),
            publisher=person.get_full_name() or person.username,
        )
        super().log_change(request, published, note)
        messages.info(request, note)
        return self._to(published)

    def _confirm(self, request: HttpRequest, template: WorkflowTemplate, **extra: Any) -> Any:
        """The question before retiring or rolling back, which a POST needs answered
        (``confirmed=yes``, as the page's form sends it): unanswered, nothing changes."""
        context = self._page(
            request,
            template,
            confirmed_field=CONFIRMED_FIELD,
            confirmed_value=CONFIRMED_YES,
            **extra,
        )
        return TemplateResponse(request, "admin/approvals/workflowtemplate/confirm.html", context)

    def retire_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        template = self._version(request, pk, "change")
        if request.method != "POST" or not confirmed(request):
            title = template.definition.get("title") or template.key
            return self._confirm(
                request,
                template,
                title=f"Retire {title}?",
                effect=retire_effect(template),
                action="Retire it",
            )
        try:
            workflow_template_retire(
                tenant=template.tenant,
                key=template.key,
                retired_by=request.user if isinstance(request.user, User) else None,
            )
        except AlreadyRetired as exc:
            messages.error(request, str(exc))
        else:
            messages.info(
                request,
                f"Retired {template.key}: it takes no new workflows; the running ones "
                "finish. Publishing a version opens it again.",
            )
        return self._to(template)

    def rollback_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        template = self._version(request, pk, "change")
        if request.method != "POST" or not confirmed(request):
            return self._confirm(
                request,
                template,
                title=f"Roll back to version {template.version}?",
                effect=rollback_effect(template),
                action=f"Publish version {template.version} again",
            )
        newest = workflow_template_versions(tenant_id=template.tenant_id, key=template.key)[0]
        try:
            published = workflow_template_rollback(
                template=template,
                published_by=request.user if isinstance(request.user, User) else None,
            )
        except DefinitionRefused as exc:
            messages.error(
                request,
                f"Version {template.version} cannot be published again: "
                + "; ".join(f"{p.path}: {p.problem}" for p in exc.problems),
            )
            return self._to(template)
        if published.pk == newest.pk:
            messages.info(request, SAME_AS_NEWEST.format(version=template.version))
        else:
            messages.info(
                request,
                f"Published version {template.version} again as version {published.version}.",
            )
        return self._to(published)


def _int(value: str | None) -> int:
    """A version number written in ASCII digits ("²" is a digit to Python, not to int)."""
    ok = value is not None and 0 < len(value) <= 9 and value.isascii() and value.isdigit()
    return int(value) if ok and value is not None else 0
