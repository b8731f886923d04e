"""What the inbox and My requests lists add to each row, and how they read their query
parameters: the sort and filters (a bad value falls back, and says so), waiting since,
who a request waits on, and what a resubmission changed, field by field. Each reads
one query for a whole page, whatever its length."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.http import QueryDict
from django.utils.timesince import timesince

from ..definitions import definition_for
from ..models import PendingTask, User, Workflow, WorkflowEvent
from ..selectors.inbox_lists import SORTS, TEXT_MAX, InboxFilter, Kind
from ..words.data import KeptLists, format_value, money_fields
from . import present

SORT_LABELS = {
    "due": "Due date, soonest first",
    "amount": "Amount, largest first",
    "waiting": "Waiting longest first",
    "requester": "Requester, A to Z",
}
assert set(SORT_LABELS) == set(SORTS)
_YES = {"1", "on", "yes", "true"}
_NO = {"", "0", "off", "no", "false"}
EMPTY = "(empty)"
SIGNALS = "_signals"  # the engine keeps signal payloads in the data; not a field

# Statuses on My requests, in words, and the engine statuses each covers.
STATUS_FILTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "waiting": ("Waiting", ("NEW", "RUNNING", "COMPENSATING")),
    "approved": ("Approved", ("COMPLETED",)),
    "rejected": ("Rejected", ("REJECTED",)),
    "cancelled": ("Withdrawn or cancelled", ("CANCELLED",)),
    "failed": ("Did not go through", ("ROLLED_BACK", "COMPENSATION_FAILED")),
}


def _quoted(value: str) -> str:
    return "“" + value[:40] + ("…" if len(value) > 40 else "") + "”"


def _flag(params: QueryDict, name: str, label: str, notes: list[str]) -> bool:
    value = params.get(name, "").strip().lower()
    if value in _YES:
        return True
    if value not in _NO:
        notes.append(f"“{label}” is on or off; {_quoted(value)} was read as off.")
    return False


def _page_number(params: QueryDict, notes: list[str]) -> int:
    raw = params.get("page", "").strip()
    if not raw:
        return 1
    if raw.isdigit() and 0 < len(raw) < 7 and int(raw) > 0:
        return int(raw)
    notes.append(f"Page {_quoted(raw)} is not a page number; the first page is shown.")
    return 1


def kind_of(params: QueryDict, kinds: Iterable[Kind], notes: list[str]) -> str:
    kind = params.get("kind", "").strip()
    if kind and kind not in {k.key for k in kinds}:
        notes.append(f"There is no kind of request {_quoted(kind)}; every kind is shown.")
        return ""
    return kind


def read_inbox_filter(
    params: QueryDict, kinds: Iterable[Kind]
) -> tuple[InboxFilter, int, list[str]]:
    """The inbox's sort, filters and page number from its query parameters, and a
    sentence for each value that could not be used (the list falls back, never fails)."""
    notes: list[str] = []
    sort = params.get("sort", "due").strip() or "due"
    if sort not in SORTS:
        notes.append(f"The inbox cannot be sorted by {_quoted(sort)}; it is sorted by due date.")
        sort = "due"
    text = params.get("q", "")
    if "\x00" in text:
        notes.append("The search text cannot hold a NUL character; it was left out.")
        text = ""
    text = " ".join(text.split())
    if len(text) > TEXT_MAX:
        notes.append(f"The search text is at most {TEXT_MAX} characters; the rest was left out.")
        text = text[:TEXT_MAX]
    chosen = InboxFilter(
        sort=sort,
        kind=kind_of(params, kinds, notes),
        overdue=_flag(params, "overdue", "Overdue only", notes),
        behalf=_flag(params, "behalf", "Held for someone else", notes),
        text=text,
    )
    return chosen, _page_number(params, notes), notes


def read_status(params: QueryDict, notes: list[str]) -> str:
    status = params.get("status", "").strip()
    if status and status not in STATUS_FILTERS:
        notes.append(f"There is no status {_quoted(status)}; every status is shown.")
        return ""
    return status


# -- times -------------------------------------------------------------------------------


def age(since: dt.datetime, now: dt.datetime) -> str:
    """``3 days``, ``2 hours``; ``under a minute``."""
    words = timesince(since, now, depth=1)
    return "under a minute" if words.startswith("0\xa0") else words.replace("\xa0", " ")


# -- who a request waits on --------------------------------------------------------------


def _names_list(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def others_asked(user: User, tasks: Iterable[PendingTask]) -> dict[tuple[str, str], list[str]]:
    """(workflow id, step) -> the first names of the others asked on that step, for
    the inbox's rows, in one query."""
    tasks = list(tasks)
    if not tasks:
        return {}
    rows = (
        PendingTask.objects.filter(
            tenant_id=user.member_tenant_id, workflow_id__in={t.workflow_id for t in tasks}
        )
        .exclude(assignee=user)
        .order_by("workflow_id", "assignee__first_name", "assignee__username")
        .values_list("workflow_id", "step", "assignee__first_name", "assignee__username")
    )
    out: dict[tuple[str, str], list[str]] = {}
    for wid, step, first, username in rows:
        out.setdefault((str(wid), step), []).append(first or username)
    return out


def inbox_waits_on(others: list[str]) -> str:
    """``Waits on you``, and ``; also asked: Carol and Dan`` when others are."""
    words = "Waits on you"
    if others:
        shown = others[:3] + ([f"{len(others) - 3} more"] if len(others) > 3 else [])
        words += f"; also asked: {_names_list(shown)}"
    return words


def waiting_on(user: User, workflows: Iterable[Workflow]) -> dict[str, str]:
    """Workflow id -> ``Waits on Bob`` (``on you`` when sent back to its submitter), for
    the workflows that wait on someone, in one query."""
    ids = [wf.pk for wf in workflows if wf.status in STATUS_FILTERS["waiting"][1]]
    if not ids:
        return {}
    rows = (
        PendingTask.objects.filter(tenant_id=user.member_tenant_id, workflow_id__in=ids)
        .order_by("workflow_id", "assignee__first_name", "assignee__username")
        .values_list("workflow_id", "assignee_id", "assignee__first_name", "assignee__username")
    )
    people: dict[str, list[str]] = {}
    for wid, assignee, first, username in rows:
        people.setdefault(str(wid), []).append(
            "you" if assignee == user.pk else (first or username)
        )
    return {
        wid: "Waits on "
        + _names_list(names[:3] + ([f"{len(names) - 3} more"] if len(names) > 3 else []))
        for wid, names in people.items()
    }


# -- what a resubmission changed ---------------------------------------------------------


@dataclass(frozen=True)
class Change:
    field: str
    old: str
    new: str


@dataclass(frozen=True)
class Resubmission:
    changes: list[Change]
    note: str  # what the submitter wrote when resubmitting, "" for nothing
    at: dt.datetime


def data_changes(
    schema: Mapping[str, Any] | None,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    lists: KeptLists | None = None,
) -> list[Change]:
    """The fields whose value reads differently, in the form's order, as people read
    them (an amount with its currency: a currency field is shown within its amount)."""
    hidden = {c for c in money_fields(schema).values() if c} | {SIGNALS}
    order = present.field_order(schema)
    order += sorted(k for k in {*old, *new} if k not in order)
    out = []
    for name in order:
        if name in hidden:
            continue
        before = format_value(schema, old, name, lists)
        after = format_value(schema, new, name, lists)
        if before != after:
            out.append(Change(present.field_label(schema, name), before or EMPTY, after or EMPTY))
    return out


def resubmissions(
    workflows: Iterable[Workflow], lists: KeptLists | None = None
) -> dict[str, Resubmission]:
    """Workflow id -> its last resubmission (what changed since the round before, and
    the note), for the workflows resubmitted at least once, in one query."""
    templates = {str(wf.pk): wf.template_id for wf in workflows}
    if not templates:
        return {}
    rows = (
        WorkflowEvent.objects.filter(
            workflow_id__in=list(templates), type__in=("WorkflowStarted", "Resubmitted")
        )
        .order_by("workflow_id", "seq")
        .values_list("workflow_id", "type", "payload", "created_at")
    )
    rounds: dict[str, list[tuple[str, Mapping[str, Any], dt.datetime]]] = {}
    for workflow_id, kind, payload, at in rows:
        rounds.setdefault(str(workflow_id), []).append((kind, payload or {}, at))
    out: dict[str, Resubmission] = {}
    for wid, events in rounds.items():
        if len(events) < 2 or events[-1][0] != "Resubmitted":
            continue
        (_, before, _), (_, after, at) = events[-2], events[-1]
        schema = definition_for(templates[wid]).schema
        out[wid] = Resubmission(
            data_changes(schema, before.get("data") or {}, after.get("data") or {}, lists),
            str(after.get("comment") or ""),
            at,
        )
    return out
