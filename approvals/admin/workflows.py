"""The workflow list and view in the admin, in people's words: each request by its
reference and summary, amount, status, who it waits on, age and submitter; each
request told as on its page (status sentence, timeline, diagram), with the stored row,
snapshot and events folded under "Technical"."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin import helpers
from django.core.exceptions import ValidationError
from django.db.models import F, JSONField, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .. import access
from ..models import PendingTask, User, Workflow, WorkflowEvent, WorkflowTemplate
from ..selectors.departments import kept_lists
from ..web import present
from ..web.story import names_in, raw_definition, workflow_story
from ..words import zones
from ..words.data import money_fields

# How many of a step's people the list names before "and N more".
NAMED_AT_MOST = 3
NOBODY = "—"


def _name(user: User | None) -> str:
    if user is None:
        return ""
    return user.get_full_name() or user.first_name or user.username


def age_words(since: dt.datetime, now: dt.datetime | None = None) -> str:
    """``3 days``, ``5 hours``, ``12 minutes``: how long ago ``since`` was, roughly."""
    seconds = max(0, int(((now or timezone.now()) - since).total_seconds()))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return "just now"


def _amount_order(tenant_ids: list[int] | None) -> Any:
    """The request's first amount in minor units, for sorting: the money fields of the
    organisation's workflow templates, the first one the data holds."""
    templates = WorkflowTemplate.objects.all()
    if tenant_ids is not None:
        templates = templates.filter(tenant_id__in=tenant_ids)
    names: list[str] = []
    for definition in templates.values_list("definition", flat=True):
        schema = definition.get("schema") if isinstance(definition, Mapping) else None
        names += [n for n in money_fields(schema) if n not in names]
    if not names:
        return None
    # Compared as jsonb, not cast: numbers order as numbers, and a value of another
    # type in old data orders apart instead of failing the whole list.
    amounts = [KeyTransform(n, "data") for n in names]
    return amounts[0] if len(amounts) == 1 else Coalesce(*amounts, output_field=JSONField())


def request_title(wf: Workflow) -> str:
    """``Expense claim E-2026-001``: the workflow template's title and the subject."""
    return f"{wf.template.title or present.humanise(wf.template_key)} {wf.subject_id}"


class TemplateFilter(admin.SimpleListFilter):
    title = "workflow template"
    parameter_name = "template"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        rows = access.admin_scope(request.user, WorkflowTemplate.objects.all())
        titles: dict[str, str] = {}
        for key, title in rows.order_by("key", "-version").values_list("key", "title"):
            titles.setdefault(key, title or present.humanise(key))
        return sorted(titles.items(), key=lambda kv: kv[1])

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(template_key=self.value()) if self.value() else queryset


class StatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        # the status kept on the row: a withdrawal is a cancel by its submitter
        words = {**present.STATUS_WORDS, "CANCELLED": "Withdrawn or cancelled"}
        hidden = {"NEW", "APPROVED", "WITHDRAWN"}
        return [(code, words[code]) for code in words if code not in hidden]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(status=self.value()) if self.value() else queryset


def _first_waiting_name() -> Subquery:
    """What "Waiting on" sorts by: the name the column shows first (its people are in
    alphabetical order); requests waiting on nobody come after the others (first when
    the order is reversed)."""
    open_tasks = PendingTask.objects.filter(workflow_id=OuterRef("pk"))
    first = open_tasks.order_by("assignee__first_name", "assignee__last_name", "assignee_id")
    return Subquery(first.values("assignee__first_name")[:1])


class TimerKindFilter(admin.SimpleListFilter):
    """The timer list's "kind" filter in words (Deadline, Reminder), not its codes."""

    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        kinds = model_admin.get_queryset(request).order_by().values_list("kind", flat=True)
        return sorted(((k, present.humanise(k)) for k in set(kinds)), key=lambda kv: kv[1])

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(kind=self.value()) if self.value() else queryset


class WorkflowPeopleAdmin(admin.ModelAdmin):
    """Mixed into the workflow admin: the list's columns and the view."""

    list_display = ["reference", "amount", "status_words", "waiting_on", "age", "submitted_by"]
    list_display_links = ["reference"]
    list_filter = [TemplateFilter, StatusFilter, "tenant"]
    search_fields = ["subject_id", "summary", "submitter__first_name", "id"]
    list_per_page = 50
    ordering = ["-created_at"]
    show_full_result_count = False
    fields = [
        "technical_id",
        "template_key",
        "template_version",
        "subject_type",
        "subject_id",
        "status",
        "public_status",
        "current_step",
        "version",
        "last_hash",
        "created",
        "updated",
        "data_json",
        "snapshot_json",
    ]
    readonly_fields = tuple(str(f) for f in fields)

    # -- the list ------------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        qs = super().get_queryset(request).select_related("template", "submitter")
        tasks = PendingTask.objects.select_related("assignee").order_by("due_at", "assignee_id")
        qs = qs.prefetch_related(Prefetch("tasks", queryset=tasks))
        qs = qs.annotate(waiting_first=_first_waiting_name())
        user: Any = request.user
        amount = _amount_order(None if user.is_superuser else [user.tenant_id])
        return qs.annotate(amount_minor=amount) if amount is not None else qs

    def action_checkbox(self, obj: Any) -> SafeString:
        """Django's checkbox, its label naming the request as the list does, not the
        row's own name (the workflow template key and status code)."""
        label = f"Select {request_title(obj)} for an action"
        attrs = {"class": "action-select", "aria-label": label}
        checkbox = forms.CheckboxInput(attrs, lambda value: False)  # none ticked at first
        return checkbox.render(helpers.ACTION_CHECKBOX_NAME, str(obj.pk))

    @admin.display(description="Request", ordering="subject_id")
    def reference(self, wf: Workflow) -> SafeString:
        title = request_title(wf)
        summary = wf.summary if wf.summary not in ("", title, wf.amount_display) else ""
        if not summary:
            return format_html("{}", title)
        return format_html('{}<span class="wf-summary">{}</span>', title, summary)

    @admin.display(description="Amount", ordering=F("amount_minor").asc(nulls_first=True))
    def amount(self, wf: Workflow) -> str:
        return wf.amount_display or NOBODY

    @admin.display(description="Status", ordering="public_status")
    def status_words(self, wf: Workflow) -> str:
        return present.status_label(wf.public_status, raw_definition(wf))

    @admin.display(description="Waiting on", ordering=F("waiting_first").asc(nulls_last=True))
    def waiting_on(self, wf: Workflow) -> str:
        tasks = list(wf.tasks.all())
        if not tasks:
            return NOBODY
        people = sorted({_name(task.assignee) for task in tasks})
        shown = ", ".join(people[:NAMED_AT_MOST])
        if len(people) > NAMED_AT_MOST:
            shown += f" and {len(people) - NAMED_AT_MOST} more"
        step = present.step_title(raw_definition(wf), tasks[0].step)
        return f"{shown} ({step})" if step else shown

    @admin.display(description="Age", ordering="-created_at")
    def age(self, wf: Workflow) -> SafeString:
        return format_html(
            '<span title="Submitted {}">{}</span>',
            zones.moment_offset(wf.created_at),
            age_words(wf.created_at),
        )

    @admin.display(description="Submitted by", ordering="submitter__first_name")
    def submitted_by(self, wf: Workflow) -> str:
        return _name(wf.submitter) or "The system"

    # -- the technical fold ----------------------------------------------------------------

    @admin.display(description="Id")
    def technical_id(self, wf: Workflow) -> str:
        return str(wf.pk)

    @admin.display(description="Created")
    def created(self, wf: Workflow) -> str:
        return zones.moment_offset(wf.created_at)

    @admin.display(description="Updated")
    def updated(self, wf: Workflow) -> str:
        return zones.moment_offset(wf.updated_at)

    @admin.display(description="Data")
    def data_json(self, wf: Workflow) -> SafeString:
        return _pre(wf.data)

    @admin.display(description="Snapshot")
    def snapshot_json(self, wf: Workflow) -> SafeString:
        return _pre(wf.snapshot)

    # -- the view ------------------------------------------------------------------------

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: Any = None
    ) -> HttpResponse:
        user: Any = request.user
        qs = access.admin_scope(user, Workflow.objects.select_related("template", "submitter"))
        try:
            wf = qs.filter(pk=object_id).first()
        except (ValueError, TypeError, ValidationError):  # not a workflow's id: Django says so
            wf = None
        extra = dict(extra_context or {})
        if wf is not None and self.has_view_permission(request, wf):
            extra.update(_view_context(wf))
        return super().change_view(request, object_id, form_url, extra)


def _pre(value: Any) -> SafeString:
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
    return format_html('<pre class="wf-json">{}</pre>', text)


def _view_context(wf: Workflow) -> dict[str, Any]:
    story = workflow_story(wf)
    hashes = dict(WorkflowEvent.objects.filter(workflow_id=wf.pk).values_list("seq", "hash"))
    names = story.names  # every actor and principal of the history is in it
    return {
        "title": request_title(wf),
        "subtitle": "",  # Django's is the row's own name, with the status code
        "story": story,
        "timeline": [{"line": line, "at": zones.moment_offset(line.at)} for line in story.timeline],
        "data_rows": present.data_rows(
            story.ctx.schema, wf.data, kept_lists(tenant_id=wf.tenant_id)
        ),
        "submitted": zones.moment_offset(wf.created_at),
        "events": [
            {
                "seq": e.seq,
                "type": e.type,
                "actor": present.person(e.actor, names) if e.actor else "The system",
                "role": e.role or "",
                "behalf": present.person(e.on_behalf_of, names) if e.on_behalf_of else "",
                "at": zones.moment_offset(e.at),
                "payload": json.dumps(e.payload, sort_keys=True, ensure_ascii=False, default=str),
                "hash": hashes.get(e.seq, ""),
            }
            for e in story.history
        ],
    }


def _time_column(field: str, description: str, *, none: str = "") -> Any:
    """A list column showing the row's ``field`` in the person's zone with the offset."""

    @admin.display(description=description, ordering=field)
    def column(self: Any, obj: Any) -> str:
        value = getattr(obj, field)
        return zones.moment_offset(value) if value else none

    return column


class RequestRowsAdmin(admin.ModelAdmin):
    """Mixed into the lists of a request's tasks, timers and automated attempts: each
    row names its request and step in words, people by name, times in the person's
    zone with the offset."""

    list_select_related = ["workflow__template"]

    @admin.display(description="Request", ordering="workflow__subject_id")
    def request(self, obj: Any) -> str:
        return request_title(obj.workflow)

    @admin.display(description="Step", ordering="step")
    def step_words(self, obj: Any) -> str:
        return present.step_title(raw_definition(obj.workflow), obj.step)

    @admin.display(description="Kind", ordering="kind")
    def kind_words(self, obj: Any) -> str:
        return present.humanise(obj.kind)

    @admin.display(description="Held by", ordering="assignee__first_name")
    def holder(self, obj: Any) -> str:
        return _name(obj.assignee)

    @admin.display(description="On behalf of")
    def behalf(self, obj: Any) -> str:
        return self._person(obj, obj.on_behalf_of)

    @admin.display(description="Handed on from")
    def handed_on(self, obj: Any) -> str:
        return self._person(obj, obj.handed_on_from)

    due = _time_column("due_at", "Due")
    fires = _time_column("fire_at", "Fires")
    fired = _time_column("fired_at", "Fired", none="Not yet")
    stopped = _time_column("dead_at", "Stopped after failing")

    @admin.display(description="Automated task", ordering="activity")
    def activity_words(self, obj: Any) -> str:
        doing = present.humanise(obj.activity)
        return f"Undo: {doing.lower()}" if obj.undo else doing

    not_before_at = _time_column("not_before", "Not before")
    finished = _time_column("finished_at", "Finished", none="Not yet")

    @admin.display(description="Outcome", ordering="outcome")
    def outcome_words(self, obj: Any) -> str:
        return present.humanise(obj.outcome) if obj.outcome else ""

    @staticmethod
    def _person(obj: Any, username: str) -> str:
        if not username:
            return ""
        return present.person(username, names_in(obj.workflow.tenant_id, [username]))


class PeopleRowsAdmin(admin.ModelAdmin):
    """Mixed into the out-of-office list: people by name, times with the offset."""

    list_select_related = ["user", "delegate", "created_by"]

    @admin.display(description="Away", ordering="user__first_name")
    def away(self, obj: Any) -> str:
        return _name(obj.user)

    @admin.display(description="Stand-in", ordering="delegate__first_name")
    def stand_in(self, obj: Any) -> str:
        return _name(obj.delegate)

    @admin.display(description="Set up by", ordering="created_by__first_name")
    def set_up_by(self, obj: Any) -> str:
        return _name(obj.created_by)

    starts = _time_column("starts_at", "From")
    ends = _time_column("ends_at", "Until")
