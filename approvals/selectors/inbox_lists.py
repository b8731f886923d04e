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

from django.db.models import BigIntegerField, BooleanField, Count, Q, QuerySet, Value, When, Window
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
    qs: QuerySet[PendingTask],
    f: InboxFilter,
    kinds: list[Kind],
    now: dt.datetime,
    tenant_id: int,
) -> QuerySet[PendingTask]:
    if f.kind and f.kind in {k.key for k in kinds}:
        qs = qs.filter(workflow__template_key=f.kind)
    if f.overdue:
        qs = qs.filter(due_at__lt=now)
    if f.behalf:
        qs = qs.exclude(on_behalf_of="")
    if f.text:
        # The people first (a subquery over the directory), so that only the person's
        # tasks are read with their workflows, never every workflow with its submitter.
        people = User.objects.filter(
            Q(first_name__icontains=f.text)
            | Q(last_name__icontains=f.text)
            | Q(username__icontains=f.text),
            tenant_id=tenant_id,
        ).values("id")
        qs = qs.filter(
            Q(workflow__summary__icontains=f.text)
            | Q(workflow__subject_id__icontains=f.text)
            | Q(workflow__submitter_id__in=people)
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
    # Two reads: the page's ids, sorted over narrow rows (a task, and its workflow's
    # sort key when the sort or a filter needs it), then those 25 tasks in full.
    # Sorting the full rows carried each row's data and template through the sort.
    narrow = _filtered(
        inbox_tasks(user).select_related(None), filters, kinds, now, user.member_tenant_id or 0
    )
    more = False
    if filters.sort not in SORTS or filters.sort == "due":
        total = narrow.count()
        pages = max(1, math.ceil(total / per_page))
        page = 1
        if cursor:
            narrow = narrow.filter(
                RawSQL(
                    '("approvals_pendingtask"."due_at", "approvals_pendingtask"."id") > (%s, %s)',
                    _decode(cursor),
                    output_field=BooleanField(),
                )
            )
        ids = list(narrow.order_by("due_at", "id").values_list("id", flat=True)[: per_page + 1])
        more = len(ids) > per_page
        ids = ids[:per_page]
    else:
        if filters.sort == "amount":
            ordered = narrow.order_by(_amount(amounts).desc(nulls_last=True), "due_at", "id")
        elif filters.sort == "waiting":
            ordered = narrow.order_by("created_at", "id")
        else:
            ordered = narrow.order_by(_requester().asc(nulls_last=True), "due_at", "id")
        # The count rides along with the page (one pass over the matching rows); a page
        # past the last is counted on its own and the last page read instead.
        counted = ordered.annotate(matching=Window(Count("id"))).values_list("id", "matching")
        page = max(1, page)
        hits = list(counted[(page - 1) * per_page : page * per_page])
        total = hits[0][1] if hits else narrow.count()
        pages = max(1, math.ceil(total / per_page))
        if not hits and total:
            page = pages
            hits = list(counted[(page - 1) * per_page : page * per_page])
        ids = [pk for pk, _ in hits]
    found = {t.pk: t for t in inbox_tasks(user).filter(id__in=ids)} if ids else {}
    rows = [found[i] for i in ids if i in found]
    cursor_next = _encode(rows[-1]) if more and rows else None
    return InboxListing(rows, total, kinds, page, pages, cursor_next)


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
