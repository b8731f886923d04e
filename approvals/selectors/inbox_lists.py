"""The inbox page's list: a person's open tasks counted, sorted (due, amount, waiting
since, requester), filtered (kind, overdue, held for someone else) and searched, a page
at a time, in a number of queries that does not grow with the rows.

Sorting by due date pages with the keyset cursor of ``selectors.tasks`` (it stays right
while tasks come and go); the other sorts page by number. Every sort and filter reads
columns of the task rows themselves (migration 0032), each sort an index led by
(tenant, assignee), so a first page reads 25 entries of one index, not the person's
every task and workflow."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import BooleanField, F, QuerySet
from django.db.models.expressions import RawSQL

from ..models import PendingTask, User, Workflow, WorkflowTemplate
from .standing_in import inbox_holders
from .tasks import _decode, _encode, inbox_tasks

SORTS = ("due", "amount", "waiting", "requester")
TEXT_MAX = 100


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


def inbox_kinds(user: User) -> list[Kind]:
    """The tenant's kinds of request by title (each key's newest title), in one query."""
    rows = WorkflowTemplate.objects.filter(tenant_id=user.member_tenant_id).order_by(
        "key", "-version"
    )
    kinds: dict[str, Kind] = {}
    for key, title in rows.values_list("key", "title"):
        kinds.setdefault(key, Kind(key, title or key))
    return sorted(kinds.values(), key=lambda k: k.title.lower())


def _filtered(
    qs: QuerySet[PendingTask], f: InboxFilter, kinds: list[Kind], now: dt.datetime
) -> QuerySet[PendingTask]:
    """The filters, on the task rows' own columns (migration 0032's indexes)."""
    if f.kind and f.kind in {k.key for k in kinds}:
        qs = qs.filter(template_key=f.kind)
    if f.overdue:
        qs = qs.filter(due_at__lt=now)
    if f.behalf:
        qs = qs.exclude(on_behalf_of="")
    if f.text:
        # the summary, the reference and the requester's names, in lower case: a
        # filter on the person's rows as a (tenant, assignee) index reads them (no
        # trigram index since migration 0037: one cost every task written)
        qs = qs.filter(search_text__contains=f.text.lower())
    return qs


# Each sort's order, every one ending in the row's id (a stable page), each the order of
# one index led by (tenant, assignee).
_ORDERS: dict[str, tuple[Any, ...]] = {
    "amount": (F("amount_minor").desc(nulls_last=True), "due_at", "id"),
    "waiting": ("created_at", "id"),
    "requester": ("requester_key", "due_at", "id"),
}


def inbox_listing(
    *,
    user: User,
    filters: InboxFilter,
    now: dt.datetime,
    cursor: str | None = None,
    page: int = 1,
    per_page: int = 25,
    catalogue: list[Kind] | None = None,
) -> InboxListing:
    """A page of ``user``'s open tasks as ``filters`` ask. A bad ``cursor`` raises
    ``selectors.tasks.BadCursor``; a page past the last is the last. ``catalogue`` is
    ``inbox_kinds(user)`` when the caller has read it already."""
    kinds = inbox_kinds(user) if catalogue is None else catalogue
    # Three reads: the count, the page's ids (a walk of the sort's index over the task
    # rows alone), then those tasks in full with their workflows. Unfiltered, the count
    # is the holders' counters (migration 0037), not a count of their tasks.
    holders = inbox_holders(user)  # whose tasks: read once, for every read
    tasks = inbox_tasks(user, holders)
    narrow = _filtered(tasks.select_related(None), filters, kinds, now)
    unfiltered = filters == InboxFilter(sort=filters.sort)
    total = open_tasks(holders) if unfiltered else narrow.count()
    pages = max(1, math.ceil(total / per_page))
    more = False
    if filters.sort not in _ORDERS:
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
        page = min(max(1, page), pages)  # a page past the last is the last
        ordered = narrow.order_by(*_ORDERS[filters.sort]).values_list("id", flat=True)
        ids = list(ordered[(page - 1) * per_page : page * per_page]) if total else []
    found = {t.pk: t for t in tasks.filter(id__in=ids)} if ids else {}
    rows = [found[i] for i in ids if i in found]
    cursor_next = _encode(rows[-1]) if more and rows else None
    return InboxListing(rows, total, kinds, page, pages, cursor_next)


# The counters as committed, and the changes this transaction has noted for its commit
# (``12:+3``; none outside a transaction that changed tasks): the count as this
# transaction sees the tasks, as a count of the rows would.
_OPEN_TASKS_SQL = """
SELECT coalesce((SELECT sum(open_tasks) FROM approvals_inboxversion
                 WHERE person_id = ANY(%(people)s)), 0)
     + coalesce((SELECT sum(nullif(split_part(e, ':', 2), '')::bigint)
                 FROM unnest(string_to_array(
                     current_setting('approvals.inbox_dirty', true), ',')) AS e
                 WHERE e <> '' AND split_part(e, ':', 1)::bigint = ANY(%(people)s)), 0)
"""


def open_tasks(people: list[int]) -> int:
    """How many open tasks ``people`` hold together, from the counters the task rows'
    triggers keep (migration 0037), in one primary-key lookup. (Someone who never held
    a task has no counter: 0.)"""
    with connection.cursor() as cur:
        cur.execute(_OPEN_TASKS_SQL, {"people": people})
        row = cur.fetchone()
    return int(row[0]) if row else 0


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
