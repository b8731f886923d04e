"""One search of workflows for the search page and ``GET /api/workflows``: a django-filter
FilterSet over what the person may read (``access.workflows_readable``). The page renders
its form; the API runs it through ``SearchFilterBackend`` and documents its parameters
from it, so the two cannot disagree on a name, a rule or an error."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_field

from .. import access
from ..api.schema import NO_NUL
from ..models import User, Workflow, WorkflowTemplate, time_bounds
from . import present

# The statuses a search can ask for besides ``PENDING_<STEP>``: what ``public_status``
# says (COMPLETED reads APPROVED there; NEW never outlives its transaction).
STATUSES = (
    "RUNNING",
    "APPROVED",
    "REJECTED",
    "CANCELLED",
    "COMPENSATING",
    "ROLLED_BACK",
    "COMPENSATION_FAILED",
)
SENT_BACK = "PENDING_SUBMITTER"
BLANK_REFUSED = "may not be blank; leave the parameter out to search without it."
MOMENT_INVALID = "Enter a date (2026-12-02) or a date and time (2026-12-02T14:15:00+05:30)."
RANGE_INVERTED = "Submitted before must be later than submitted from."
TEXT_MAX = 200
PAGE_LIMIT = 100  # rows the page shows; the API pages with limit and offset


class MomentField(forms.Field):
    """A date or a date and time. A date alone is the start of that day in the person's
    time zone (the active one), so ``2026-12-02`` to ``2026-12-03`` is one whole day."""

    widget = forms.DateInput(attrs={"type": "date"})
    default_error_messages = {"invalid": MOMENT_INVALID}

    def to_python(self, value: Any) -> dt.datetime | None:
        if value in self.empty_values:
            return None
        if isinstance(value, dt.datetime):
            return value
        text = str(value).strip()
        try:
            moment = parse_datetime(text)
            day = None if moment else parse_date(text)
        except ValueError:
            moment = day = None
        if moment is not None and timezone.is_naive(moment):
            moment = timezone.make_aware(moment)
        elif moment is None and day is not None:
            moment = dt.datetime.combine(day, dt.time.min, tzinfo=timezone.get_current_timezone())
        if moment is None:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        # An offset past fourteen hours is refused by the database; year 1 east of
        # Greenwich is BC there.
        problem = time_bounds.moment_problem(moment)
        if problem is not None:
            raise forms.ValidationError(problem, code="out_of_range")
        return moment


_MOMENT_SCHEMA = {
    "type": "string",
    "anyOf": [{"format": "date"}, {"format": "date-time"}],
    "description": "A date (the start of that day, UTC) or an ISO 8601 date and time, "
    "from 1970-01-01 to 2200-12-31, with a UTC offset of at most 14 hours.",
}


@extend_schema_field(_MOMENT_SCHEMA)
class MomentFilter(django_filters.Filter):
    field_class = MomentField


@extend_schema_field(
    {
        "type": "string",
        "pattern": "^(" + "|".join(STATUSES) + "|PENDING_[A-Z0-9_]{1,64})$",
        "description": "RUNNING, APPROVED, REJECTED, CANCELLED, COMPENSATING, ROLLED_BACK, "
        "COMPENSATION_FAILED, or PENDING_<STEP> for a step of one of your organisation's "
        "workflow templates (PENDING_SUBMITTER: sent back for changes).",
    }
)
class StatusFilter(django_filters.ChoiceFilter):
    """The public status (``PENDING_FINANCE``, ``APPROVED``) or the engine's (``RUNNING``
    also finds every workflow waiting at a step)."""

    def filter(self, qs: QuerySet[Any], value: Any) -> QuerySet[Any]:
        if value in self.field.empty_values:
            return qs
        return qs.filter(Q(public_status=value) | Q(status=value))


def _text(label: str, field: str, max_length: int, **kw: Any) -> django_filters.CharFilter:
    """A text filter whose schema says its length (1 to ``max_length``; no NUL)."""
    schema = {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": NO_NUL}
    return extend_schema_field(schema)(
        django_filters.CharFilter(label=label, field_name=field, max_length=max_length, **kw)
    )


class SearchForm(forms.Form):
    """The filters' form: the checks across fields, and the API's refusal of blanks."""

    refuse_blank = False

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.refuse_blank:
            for name in self.fields:
                if name in self.data and not str(self.data.get(name, "")).strip():
                    self.add_error(name, BLANK_REFUSED)
        after, before = cleaned.get("createdAfter"), cleaned.get("createdBefore")
        if after and before and before <= after:
            self.add_error("createdBefore", RANGE_INVERTED)
        return cleaned


class WorkflowSearch(django_filters.FilterSet):
    """What a person may ask of the workflows they may read. The choices of ``status`` and
    ``template`` are their organisation's; anything else is a form error (400)."""

    text = _text(
        "Words",
        "",
        TEXT_MAX,
        method="filter_text",
        help_text="Each word in the reference, the kind of request or the submitter's name.",
    )
    status = StatusFilter(label="Status", choices=[], empty_label="Any status")
    template = django_filters.ChoiceFilter(
        label="Kind of request", field_name="template_key", choices=[], empty_label="Any kind"
    )
    subjectId = _text("Reference", "subject_id", 128)
    subjectType = _text("Subject type", "subject_type", 64)
    submitter = _text("Submitted by (username)", "submitter__username", 150)
    # One row per workflow even when the person holds two of its open tasks.
    assignee = _text("Waiting for (username)", "tasks__assignee__username", 150, distinct=True)
    createdAfter = MomentFilter(label="Submitted from", field_name="created_at", lookup_expr="gte")
    createdBefore = MomentFilter(
        label="Submitted before", field_name="created_at", lookup_expr="lt"
    )

    class Meta:
        model = Workflow
        fields: list[str] = []
        form = SearchForm

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        queryset: QuerySet[Workflow] | None = None,
        *,
        request: Any = None,
        prefix: str | None = None,
        refuse_blank: bool = False,
    ) -> None:
        user = getattr(request, "user", None)
        if not isinstance(user, User):
            raise TypeError("a search needs the request of a signed-in member")
        self.user = user
        self.refuse_blank = refuse_blank
        # Whatever the caller passes, a search sees only what the person may read.
        super().__init__(
            data, queryset=access.workflows_readable(user), request=request, prefix=prefix
        )
        statuses, kinds = _choices(user)
        for name, choices in (("status", statuses), ("template", kinds)):
            own = self.filters[name]
            own.extra["choices"] = choices
            # A field built on the class's filter (the schema builds one) has no choices.
            own.__dict__.pop("_field", None)

    @property
    def form(self) -> SearchForm:
        form = super().form
        form.refuse_blank = self.refuse_blank
        return form

    def filter_text(self, qs: QuerySet[Workflow], name: str, value: str) -> QuerySet[Workflow]:
        words = value.split()
        for word in words:
            qs = qs.filter(
                Q(subject_id__icontains=word)
                | Q(template_key__icontains=word)
                | Q(template__title__icontains=word)
                | Q(submitter__username__icontains=word)
                | Q(submitter__first_name__icontains=word)
                | Q(submitter__last_name__icontains=word)
            )
        return qs

    def results(self, *, limit: int = PAGE_LIMIT, offset: int = 0) -> list[Workflow]:
        """The page of matches, newest first; call after ``is_valid()``."""
        return list(
            self.qs.select_related("submitter", "template").order_by("-created_at", "pk")[
                offset : offset + limit
            ]
        )


def _choices(user: User) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The organisation's statuses (each approval step of any version of its workflow
    templates) and kinds of request, in one query."""
    rows = (
        WorkflowTemplate.objects.filter(tenant_id=user.member_tenant_id)
        .order_by("key", "version")
        .values_list("key", "title", "definition")
    )
    kinds: dict[str, str] = {}
    waiting: dict[str, str] = {}
    for key, title, definition in rows:
        kinds[key] = title
        raw = definition if isinstance(definition, Mapping) else {}
        titles = present.step_titles(raw)
        for step in raw.get("steps") or []:
            if isinstance(step, Mapping) and step.get("kind") == "approval":
                waiting[f"PENDING_{str(step.get('id')).upper()}"] = titles.get(
                    str(step.get("id")), ""
                )
    statuses = [
        ("RUNNING", present.STATUS_WORDS["RUNNING"]),
        *sorted(((k, f"Waiting: {v}") for k, v in waiting.items()), key=lambda kv: kv[1]),
        (SENT_BACK, present.status_label(SENT_BACK)),
        *((s, present.STATUS_WORDS[s]) for s in STATUSES if s != "RUNNING"),
    ]
    return statuses, sorted(kinds.items(), key=lambda kv: kv[1])


class SearchFilterBackend(DjangoFilterBackend):
    """The API's use of the search: a blank parameter is an error there (a client that
    sends ``status=`` meant something), where the page's empty fields mean "any"."""

    def get_filterset_kwargs(self, request: Any, queryset: Any, view: Any) -> dict[str, Any]:
        return {**super().get_filterset_kwargs(request, queryset, view), "refuse_blank": True}
