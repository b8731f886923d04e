"""The audit export: every event of an organisation's workflows, one row each, as CSV
or JSON Lines, streamed from a server-side cursor so a year of history never sits in
memory; and the same rows a page at a time behind a keyset cursor (the event id)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KT

from ..models import WorkflowEvent
from ..selectors.tasks import BAD_CURSOR, BadCursor

# One row per event, in this order (the CSV header).
COLUMNS: tuple[str, ...] = (
    "event_id",
    "workflow_id",
    "seq",
    "type",
    "step",
    "decision",
    "actor",
    "role",
    "on_behalf_of",
    "comment",
    "time",
    "template_key",
    "template_version",
    "subject_type",
    "subject_id",
    "status",
    "prev_hash",
    "hash",
)
FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
FORMAT_UNKNOWN = "format: csv or jsonl."
CURSOR_SALT = "approvals.audit.events.cursor"
_MAX_ID = 2**63 - 1
# Text a spreadsheet would run as a formula when it starts so.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_VALUES = {
    "event_id": "id",
    "workflow_id": "workflow_id",
    "seq": "seq",
    "type": "type",
    "step": "x_step",
    "decision": "x_decision",
    "actor": "actor__username",
    "role": "role",
    "on_behalf_of": "on_behalf_of__username",
    "comment": "x_comment",
    "time": "created_at",
    "template_key": "workflow__template_key",
    "template_version": "workflow__template_version",
    "subject_type": "workflow__subject_type",
    "subject_id": "workflow__subject_id",
    "status": "workflow__public_status",
    "prev_hash": "prev_hash",
    "hash": "hash",
}


@dataclass(frozen=True)
class ExportFilter:
    """Which events: all of them when every field is empty. ``since`` / ``until`` bound
    the event's time (``since`` included, ``until`` not); ``subject`` is a subject id or
    ``type:id``; ``person`` a username that acted or submitted the workflow."""

    template: str | None = None
    status: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    subject: str | None = None
    person: str | None = None
    workflow_ids: Sequence[Any] | None = None


def audit_events(*, tenant_id: int, filters: ExportFilter) -> QuerySet[WorkflowEvent]:
    """The events of one organisation matching ``filters``, by event id."""
    qs = WorkflowEvent.objects.filter(tenant_id=tenant_id)
    f = filters
    if f.template:
        qs = qs.filter(workflow__template_key=f.template)
    if f.status:
        qs = qs.filter(Q(workflow__public_status=f.status) | Q(workflow__status=f.status))
    if f.since is not None:
        qs = qs.filter(created_at__gte=f.since)
    if f.until is not None:
        qs = qs.filter(created_at__lt=f.until)
    if f.subject:
        match = Q(workflow__subject_id=f.subject)
        if ":" in f.subject:
            kind, ident = f.subject.split(":", 1)
            match |= Q(workflow__subject_type=kind, workflow__subject_id=ident)
        qs = qs.filter(match)
    if f.person:
        qs = qs.filter(Q(actor__username=f.person) | Q(workflow__submitter__username=f.person))
    if f.workflow_ids is not None:
        qs = qs.filter(workflow_id__in=list(f.workflow_ids))
    return qs.order_by("id")


def _rows(qs: QuerySet[WorkflowEvent]) -> QuerySet[Any]:
    return qs.annotate(
        x_step=KT("payload__step"),
        x_decision=KT("payload__decision"),
        x_comment=KT("payload__comment"),
    ).values_list(*_VALUES.values())


def _record(values: Sequence[Any]) -> dict[str, Any]:
    row = dict(zip(COLUMNS, values, strict=True))
    row["workflow_id"] = str(row["workflow_id"])
    row["time"] = row["time"].astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    row["comment"] = row["comment"] or ""
    return row


def audit_rows(*, tenant_id: int, filters: ExportFilter) -> Iterator[dict[str, Any]]:
    """Every matching event as a row, read through a server-side cursor on PostgreSQL
    (``APPROVALS_AUDIT_EXPORT_CHUNK`` rows per round trip)."""
    qs = _rows(audit_events(tenant_id=tenant_id, filters=filters))
    for values in qs.iterator(chunk_size=settings.APPROVALS_AUDIT_EXPORT_CHUNK):
        yield _record(values)


def audit_export(*, tenant_id: int, filters: ExportFilter, fmt: str) -> Iterator[str]:
    """The export as text chunks (one per row, after the CSV header)."""
    if fmt not in FORMATS:
        raise ValueError(FORMAT_UNKNOWN)
    rows = audit_rows(tenant_id=tenant_id, filters=filters)
    if fmt == "jsonl":
        for row in rows:
            yield json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"
        return
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def line(values: Sequence[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        return buffer.getvalue()

    yield line(COLUMNS)
    for row in rows:
        yield line([_cell(row[c]) for c in COLUMNS])


def _cell(value: Any) -> Any:
    """Every text cell, not only the typed ones: a user name (actor, on behalf of), a
    step id or a subject type comes from a person too. Ids, times and hashes never
    start so, and are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def export_filename(*, tenant_slug: str, fmt: str, at: dt.datetime) -> str:
    return f"audit-{tenant_slug}-{at:%Y%m%dT%H%M%SZ}.{fmt}"


@dataclass(frozen=True)
class EventPage:
    rows: list[dict[str, Any]]
    next_cursor: str | None


def _encode(event_id: int) -> str:
    return signing.dumps([event_id], salt=CURSOR_SALT)


def _decode(cursor: str) -> int:
    try:
        (event_id,) = signing.loads(cursor, salt=CURSOR_SALT)
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise BadCursor(BAD_CURSOR) from exc
    if isinstance(event_id, bool) or not isinstance(event_id, int):
        raise BadCursor(BAD_CURSOR)
    if not 0 < event_id <= _MAX_ID:
        raise BadCursor(BAD_CURSOR)
    return event_id


def audit_page(
    *, tenant_id: int, filters: ExportFilter, limit: int, cursor: str | None = None
) -> EventPage:
    """One page of matching events after ``cursor``, by event id (the primary key:
    stable while events are appended, each event on exactly one page)."""
    qs = audit_events(tenant_id=tenant_id, filters=filters)
    if cursor:
        qs = qs.filter(id__gt=_decode(cursor))
    rows = [_record(v) for v in _rows(qs)[: limit + 1]]
    more = len(rows) > limit
    rows = rows[:limit]
    return EventPage(rows, _encode(rows[-1]["event_id"]) if more and rows else None)
