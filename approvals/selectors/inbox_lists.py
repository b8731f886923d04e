"""The inbox page's list: a person's open tasks counted, sorted (due, amount, waiting
since, requester), filtered (kind, overdue, held for someone else) and searched, a page
at a time, in a number of queries that does not grow with the rows.

Sorting by due date pages with the keyset cursor of ``selectors.tasks`` (it stays right
while tasks come and go); the other sorts page by number."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from django.db.models import BigIntegerField, BooleanField, Q, QuerySet, Value, When
from django.db.models import Case as CaseWhen
from django.db.models.expressions import RawSQL
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce, Lower, NullIf

from ..data_words import money_fields
from ..models import PendingTask, User, Workflow, WorkflowTemplate
from .tasks import _decode, _encode, inbox_tasks

SORTS = ("due", "amount", "waiting", "requester")
TEXT_MAX = 100
_FIELD_NAME_OK = str.isidentifier


@dataclass(frozen=True)
class InboxFilter:
    sort: str = "due"
    kind: str = ""  # a workflow template key; "" is every kind
    overdue: bool = False
    behalf: bool = False  # only the tasks held for someone else
    text: str = ""


@dataclass(frozen=True)
class Kind:
    key: str
    title: str


@dataclass(frozen=True)
class InboxListing:
    tasks: list[PendingTask]
    total: int  # every task the filter matches, not only this page's
    kinds: list[Kind]
    page: int  # 1 when sorted by due date (which pages by cursor)
    pages: int
    next_cursor: str | None


def inbox_kinds(user: User) -> tuple[list[Kind], dict[str, list[str]]]:
    """The tenant's kinds of request by title, and each kind's amount fields (the first
    money field of each of its versions), in one query."""
    rows = WorkflowTemplate.objects.filter(tenant_id=user.member_tenant_id).order_by(
        "key", "-version"
    )
    kinds: dict[str, Kind] = {}
    amounts: dict[str, list[str]] = {}
    for key, title, definition in rows.values_list("key", "title", "definition"):
        kinds.setdefault(key, Kind(key, title or key))
        schema = definition.get("schema") if isinstance(definition, dict) else None
        first = next(iter(money_fields(schema if isinstance(schema, dict) else None)), None)
        fields = amounts.setdefault(key, [])
        if first and _FIELD_NAME_OK(first) and first not in fields:
            fields.append(first)
    return sorted(kinds.values(), key=lambda k: k.title.lower()), amounts


def _amount(amounts: dict[str, list[str]]) -> Any:
    """The request's amount in minor units, by its kind's money field (None without
    one). Amounts of different currencies are compared as numbers."""
    whens = []
    for key, fields in amounts.items():
        values = [Cast(KeyTextTransform(f, "workflow__data"), BigIntegerField()) for f in fields]
        if values:
            whens.append(
                When(
                    workflow__template_key=key,
                    then=values[0] if len(values) == 1 else Coalesce(*values),
                )
            )
    return CaseWhen(*whens, default=Value(None), output_field=BigIntegerField())


def _requester() -> Any:
    first = NullIf("workflow__submitter__first_name", Value(""))
    return Lower(Coalesce(first, "workflow__submitter__username"))


def _filtered(
    qs: QuerySet[PendingTask], f: InboxFilter, kinds: list[Kind], now: dt.datetime
) -> QuerySet[PendingTask]:
    if f.kind and f.kind in {k.key for k in kinds}:
        qs = qs.filter(workflow__template_key=f.kind)
    if f.overdue:
        qs = qs.filter(due_at__lt=now)
    if f.behalf:
        qs = qs.exclude(on_behalf_of="")
    if f.text:
        qs = qs.filter(
            Q(workflow__summary__icontains=f.text)
            | Q(workflow__subject_id__icontains=f.text)
            | Q(workflow__template__title__icontains=f.text)
            | Q(workflow__submitter__first_name__icontains=f.text)
            | Q(workflow__submitter__last_name__icontains=f.text)
            | Q(workflow__submitter__username__icontains=f.text)
        )
    return qs


def inbox_listing(
    *,
    user: User,
    filters: InboxFilter,
    now: dt.datetime,
    cursor: str | None = None,
    page: int = 1,
    per_page: int = 25,
    catalogue: tuple[list[Kind], dict[str, list[str]]] | None = None,
) -> InboxListing:
    """A page of ``user``'s open tasks as ``filters`` ask. A bad ``cursor`` raises
    ``selectors.tasks.BadCursor``; a page past the last is the last. ``catalogue`` is
    ``inbox_kinds(user)`` when the caller has read it already."""
    kinds, amounts = catalogue or inbox_kinds(user)
    qs = _filtered(inbox_tasks(user), filters, kinds, now)
    total = qs.count()
    pages = max(1, math.ceil(total / per_page))
    if filters.sort not in SORTS or filters.sort == "due":
        if cursor:
            qs = qs.filter(
                RawSQL(
                    '("approvals_pendingtask"."due_at", "approvals_pendingtask"."id") > (%s, %s)',
                    _decode(cursor),
                    output_field=BooleanField(),
                )
            )
        rows = list(qs.order_by("due_at", "id")[: per_page + 1])
        more = len(rows) > per_page
        rows = rows[:per_page]
        return InboxListing(rows, total, kinds, 1, pages, _encode(rows[-1]) if more else None)
    page = min(max(1, page), pages)
    if filters.sort == "amount":
        ordered = qs.order_by(_amount(amounts).desc(nulls_last=True), "due_at", "id")
    elif filters.sort == "waiting":
        ordered = qs.order_by("created_at", "id")
    else:
        ordered = qs.order_by(_requester().asc(nulls_last=True), "due_at", "id")
    start = (page - 1) * per_page
    return InboxListing(list(ordered[start : start + per_page]), total, kinds, page, pages, None)


def requests_of(
    *, user: User, statuses: tuple[str, ...] = (), kind: str = "", limit: int = 100
) -> list[Workflow]:
    """The workflows ``user`` submitted, newest first, of ``statuses`` (engine
    statuses; all when empty) and of the kind ``kind`` (all when "")."""
    qs = Workflow.objects.filter(tenant_id=user.member_tenant_id, submitter=user)
    if statuses:
        qs = qs.filter(status__in=statuses)
    if kind:
        qs = qs.filter(template_key=kind)
    return list(qs.select_related("submitter", "template").order_by("-created_at", "pk")[:limit])
