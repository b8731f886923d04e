"""One search of workflows for the search page and ``GET /api/workflows``: a django-filter
FilterSet over what the person may read (``access.workflows_readable_from_own``). The
page renders its form; the API runs it through ``SearchFilterBackend`` and documents its
parameters from it, so the two cannot disagree on a name, a rule or an error."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import django_filters
from django import forms
from django.db.models import F, Q, QuerySet
from django.db.models.fields.json import KT, KeyTransform
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_field

from .. import access
from ..api.schema import NO_NUL
from ..models import User, Workflow, WorkflowTemplate, time_bounds
from ..runtime import replica, tenant_scope
from ..selectors import search_text
from ..words.data import money_fields
from . import present
from .forms import MoneyField

# The statuses a search can ask for besides ``PENDING_<STEP>``: what ``public_status``
# says (COMPLETED reads APPROVED there; NEW never outlives its transaction).
STATUSES = (
    "RUNNING",
    "APPROVED",
    "REJECTED",
    "CANCELLED",
    "WITHDRAWN",
    "COMPENSATING",
    "ROLLED_BACK",
    "COMPENSATION_FAILED",
)
SENT_BACK = "PENDING_SUBMITTER"
BLANK_REFUSED = "may not be blank; leave the parameter out to search without it."
MOMENT_INVALID = "Enter a date (2026-12-02) or a date and time (2026-12-02T14:15:00+05:30)."
RANGE_INVERTED = "Submitted before must be later than submitted from."
TEXT_MAX = 200
TEXT_WORDS_MAX = 20
TOO_MANY_WORDS = f"Search with at most {TEXT_WORDS_MAX} words."
WORD_UNSEARCHABLE = (
    "“{word}” has no letter or digit a search can use: leave it out, or search for a "
    "word beside it."
)
AMOUNT_INVERTED = "Amount up to must be at least the amount from."
AMOUNT_MAX_MINOR = 10**17  # a trillion in currency units, with room to spare
PAGE_LIMIT = 100  # rows the API answers by default; the page shows PAGE_SIZE
PAGE_SIZE = 25
PAGES_MAX = 4000  # the API's deepest offset (100,000) in pages of 25
PAGE_INVALID = f"Choose a page from 1 to {PAGES_MAX:,}."
SORTS = [
    ("newest", "Newest first"),
    ("oldest", "Oldest first"),
    ("amount", "Largest amount first"),
    ("status", "Status"),
]


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
        "description": "RUNNING, APPROVED, REJECTED, CANCELLED, WITHDRAWN (cancelled by its "
        "submitter), COMPENSATING, ROLLED_BACK, "
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


class AmountField(MoneyField):
    """An amount in currency units as people type it (``₹10,000``, ``10000.50``), in
    minor units: the same for every currency the demo knows (two places)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(min_minor=0, max_minor=AMOUNT_MAX_MINOR, **kw)

    def to_python(self, value: Any) -> int | None:  # type: ignore[override]
        if isinstance(value, str):
            value = value.strip().lstrip("₹$€£").removeprefix("Rs").strip()
        return super().to_python(value)


@extend_schema_field(
    {
        "type": "string",
        "pattern": r"^[0-9][0-9,]*(\.[0-9]{1,2})?$",
        "description": "An amount in currency units (10000 or 10,000.50), compared with "
        "the request's amount in its own currency.",
    }
)
class AmountFilter(django_filters.Filter):
    field_class = AmountField


class SearchForm(forms.Form):
    """The filters' form: the checks across fields, and the API's refusal of blanks."""

    refuse_blank = False
    # The text's words as tsquery values (search_text.word_queries), read once here to
    # check them and used again by the filter.
    word_queries: search_text.WordQueries | None = None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.refuse_blank:
            for name in self.fields:
                if name in self.data and not str(self.data.get(name, "")).strip():
                    self.add_error(name, BLANK_REFUSED)
        after, before = cleaned.get("createdAfter"), cleaned.get("createdBefore")
        if after and before and before <= after:
            self.add_error("createdBefore", RANGE_INVERTED)
        low, high = cleaned.get("amountMin"), cleaned.get("amountMax")
        if low is not None and high is not None and high < low:
            self.add_error("amountMax", AMOUNT_INVERTED)
        words = search_text.words_of(cleaned.get("text") or "")
        if len(words) > TEXT_WORDS_MAX:
            self.add_error("text", TOO_MANY_WORDS)
        elif words:
            self.word_queries = search_text.word_queries(words)
            for word in search_text.unsearchable(self.word_queries)[:1]:
                self.add_error("text", WORD_UNSEARCHABLE.format(word=word))
        return cleaned


class WorkflowSearch(django_filters.FilterSet):
    """What a person may ask of the workflows they may read. The choices of ``status`` and
    ``template`` are their organisation's; anything else is a form error (400)."""

    text = _text(
        "Words",
        "",
        TEXT_MAX,
        method="filter_text",
        help_text="Each word in the description or any text of the request, its reference, "
        "its kind or the submitter's name.",
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
    amountMin = AmountFilter(label="Amount from", method="filter_amount")
    amountMax = AmountFilter(label="Amount up to", method="filter_amount")
    decidedBy = _text("Decided by (username)", "", 150, method="filter_decided_by")
    sort = django_filters.ChoiceFilter(
        label="Sort by", choices=SORTS, empty_label=None, method="filter_sort"
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
        # Whatever the caller passes, a search sees only what the person may read: for
        # someone who reads only what they take part in, those rows lead.
        self.own_ids = access.own_workflow_ids(user)
        # the words' text, and the same words asked through the index
        # (search_text.WordsMatch), once filtered
        self.words_text: str | None = None
        self.words_lookup: Q | None = None
        readable = (
            access.workflows_readable(user)
            if self.own_ids is None
            else access.workflows_of_ids(user, self.own_ids)
        )
        super().__init__(data, queryset=readable, request=request, prefix=prefix)
        statuses, kinds, self.money_fields = _choices(user)
        self.kinds = kinds
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
        words = search_text.words_of(value)
        tenant = self.user.member_tenant_id
        # a person's own rows are few: their words are tested on them, not looked up
        match = search_text.words_match(
            words,
            tenant_id=tenant,
            kinds=self.kinds,
            indexed=self.own_ids is None,
            under_policy=tenant_scope.acting_now() == tenant,
            queries=self.form.word_queries,
        )
        self.words_text = match.text
        self.words_lookup = match.lookup
        return qs.filter(match.condition)

    def filter_amount(self, qs: QuerySet[Workflow], name: str, value: int) -> QuerySet[Workflow]:
        lookup = "gte" if name == "amountMin" else "lte"
        amount = search_text.amount_minor(self.money_fields)
        return qs.alias(amount_minor=amount).filter(**{f"amount_minor__{lookup}": value})

    def filter_decided_by(
        self, qs: QuerySet[Workflow], name: str, value: str
    ) -> QuerySet[Workflow]:
        return qs.filter(search_text.decided_by(value))

    def filter_sort(self, qs: QuerySet[Workflow], name: str, value: str) -> QuerySet[Workflow]:
        return qs  # the order is the results' (``ordered``)

    def ordered(self) -> QuerySet[Workflow]:
        """The matches in the order asked (newest first unless told), every row once
        and in a stable place, so pages neither skip nor repeat one."""
        cleaned = self.form.cleaned_data or {}
        sort = cleaned.get("sort") or "newest"
        words = bool(search_text.words_of(cleaned.get("text") or ""))
        qs = self.qs.select_related("submitter", "template")
        if sort == "oldest":
            return qs.order_by(*search_text.created_order(newest=False, words=words))
        newest = search_text.created_order(newest=True, words=words)
        if sort == "amount":
            amount = search_text.amount_minor(self.money_fields)
            return qs.alias(sort_amount=amount).order_by(
                F("sort_amount").desc(nulls_last=True), *newest
            )
        if sort == "status":
            return qs.order_by("public_status", *newest)
        return qs.order_by(*newest)

    @replica.replica_read
    def results(
        self, *, limit: int = PAGE_LIMIT, offset: int = 0, columns: tuple[str, ...] = ()
    ) -> list[Workflow]:
        """A page of matches in the order asked; call after ``is_valid()``. ``columns``:
        only these of each workflow (``PAGE_COLUMNS``: what the page shows), else all.
        A search by words in time order that may fill a page from the newest rows
        (words common among the organisation's newest workflows, or naming a kind or a
        person: search_text.window_may_fill) asks them first: when they hold the whole
        page, it is the page (every row outside is older), and a common word's page
        walks a few hundred rows instead of reading every match
        (search_text.time_window). Otherwise (a rarer word, or the few rows a person
        takes part in) the matches are read first and their ids sorted
        (search_text.matches_first): each query's cost is bounded by the window or by
        the matches, whatever the planner guesses of a word's share."""
        cleaned = self.form.cleaned_data or {}
        sort = cleaned.get("sort") or "newest"
        words = search_text.words_of(cleaned.get("text") or "")
        if sort not in ("newest", "oldest") or not words:
            ordered = self.ordered()
            if columns:
                ordered = _narrowed(ordered, columns)
            return list(ordered[offset : offset + limit])
        newest = sort == "newest"
        rows = offset + limit
        tenant = self.user.member_tenant_id
        # the filters run here: filter_text sets words_text and words_lookup
        matches = self.qs
        # the rows a person takes part in are few: no window saves reading them
        if self.own_ids is None and search_text.window_may_fill(
            self.words_text, tenant_id=tenant, rows=rows
        ):
            window = search_text.time_window(tenant, newest=newest, rows=rows)
            if window is not None:
                # the page's ids alone, then its rows: joined to its workflow template
                # (read under its policy, two rows), the planner took a common word's
                # page for a few rows and sorted every match of the window (14 ms at
                # ten million events) instead of walking the newest rows (0.5 ms)
                in_window = matches.filter(window).order_by(
                    *search_text.created_order(newest=newest)
                )
                ids = list(in_window.values_list("pk", flat=True)[offset : offset + limit])
                if len(ids) == limit:
                    return self._rows(ids, newest=newest, columns=columns)
        if self.words_lookup is not None:
            # under the organisation's policy the words' GIN index serves only the lookup
            matches = matches.filter(self.words_lookup)
        ids = search_text.matches_first(matches, newest=newest, limit=limit, offset=offset)
        if not ids:
            return []
        return self._rows(ids, newest=newest, columns=columns)

    def _rows(self, ids: list[Any], *, newest: bool, columns: tuple[str, ...]) -> list[Workflow]:
        """The page's rows by primary key, in time order: their words are not asked
        again."""
        found = Workflow.objects.filter(tenant_id=self.user.member_tenant_id, pk__in=ids)
        found = found.select_related("submitter", "template")
        if columns:
            found = _narrowed(found, columns)
        return list(found.order_by(*search_text.created_order(newest=newest)))


# What the search page shows of each workflow (pages._workflow_rows): not its snapshot
# (only whether it waits for its submitter's changes, read as two of its keys) nor its
# template's definition (cached per version: definitions.raw_definition_for).
PAGE_COLUMNS = (
    "tenant_id",
    "template_id",
    "subject_id",
    "summary",
    "status",
    "public_status",
    "created_at",
    "data",
    "submitter_id",
    "submitter__username",
    "submitter__first_name",
    "template__title",
)


def _narrowed(qs: QuerySet[Workflow], columns: tuple[str, ...]) -> QuerySet[Workflow]:
    return qs.only(*columns).annotate(
        resubmit_step=KT("snapshot__resubmit_step"),
        asked=KeyTransform("assignments", "snapshot"),
    )


def _choices(
    user: User,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """The organisation's statuses (each approval step of any version of its workflow
    templates), kinds of request and money fields (the first of each version first, as
    its amount), in one query."""
    rows = (
        WorkflowTemplate.objects.filter(tenant_id=user.member_tenant_id)
        .order_by("key", "version")
        .values_list("key", "title", "definition")
    )
    kinds: dict[str, str] = {}
    waiting: dict[str, str] = {}
    money: dict[str, None] = {}
    for key, title, definition in rows:
        kinds[key] = title
        raw = definition if isinstance(definition, Mapping) else {}
        schema = raw.get("schema")
        money.update(dict.fromkeys(money_fields(schema if isinstance(schema, Mapping) else None)))
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
    return statuses, sorted(kinds.items(), key=lambda kv: kv[1]), list(money)


class SearchFilterBackend(DjangoFilterBackend):
    """The API's use of the search: a blank parameter is an error there (a client that
    sends ``status=`` meant something), where the page's empty fields mean "any"."""

    def get_filterset_kwargs(self, request: Any, queryset: Any, view: Any) -> dict[str, Any]:
        return {**super().get_filterset_kwargs(request, queryset, view), "refuse_blank": True}
