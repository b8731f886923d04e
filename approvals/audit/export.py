"""The audit export: every event of an organisation's workflows, one row each, as CSV
or JSON Lines, streamed from a server-side cursor so a year of history never sits in
memory; and the same rows a page at a time behind a keyset cursor (the event id)."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core import signing
from django.db.models import Q, QuerySet

from ..models import Tenant, User, Workflow, WorkflowEvent
from ..runtime import replica
from ..runtime.archived import archived_in_place
from ..selectors.tasks import BAD_CURSOR, BadCursor
from .archived import archived_export_rows
from .daily_proof import inclusion_proof, seal_fields
from .keys import SealKeyMissing, seal_key
from .models import ArchivedWorkflow, ChainSeal, DailySeal
from .offline_verify import (
    HASHED_COLUMNS,
    STATEMENT_FORMAT,
    events_line,
    key_id,
    shown_columns,
    statement_signature,
)

# One row per event, in this order (the CSV header). Every column is either covered by
# the event's hash or derived from what it covers (``offline_verify.shown_columns``), so
# a reader can check each one: the actor's name, the template, the subject and the status
# are the ones recorded when the event was written (hash format 3), never today's rows.
COLUMNS: tuple[str, ...] = (
    "workflow_id",
    "seq",
    "type",
    "step",
    "decision",
    "actor",
    "actor_name",
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
# What each JSON Lines row adds: every column an event's hash covers, as the hash read
# it (approvals.runtime.chain; ``created_at`` is the exact text hashed), and the
# workflow's recorded head, so the chains can be checked without the database
# (approvals.audit.offline_verify). The head is null when a filter (since, until,
# person) leaves out part of a history, since the export cannot then show its tail.
CHAIN_FIELDS: tuple[str, ...] = (
    *(c for c in HASHED_COLUMNS if c not in COLUMNS),
    "workflow_version",
    "workflow_last_hash",
)
JSONL_FIELDS: tuple[str, ...] = (*COLUMNS, *CHAIN_FIELDS)
# The CSV, for people: the columns, and beside the type the sentence the request page's
# history says of the event (a reading aid derived from the hashed event by the app's
# words: ``verify_audit --export`` checks it against them; JSON Lines, the file a
# machine verifies offline, leaves it out).
CSV_COLUMNS: tuple[str, ...] = (*COLUMNS[:3], "sentence", *COLUMNS[3:])
# The words beside an event (the front doors pass ``audit.export_words.EventSentences``:
# the sentences are the pages' words, a layer above this one).
Sentences = Callable[[Mapping[str, Any]], str]
# The fields of a seal line (``{"seal": {...}}``, after the events): what its
# signature covers (approvals.audit.seal), ``sealed_at`` as the exact text signed.
SEAL_FIELDS: tuple[str, ...] = (
    "number",
    "tenant_id",
    "tenant_slug",
    "sealed_at",
    "count",
    "digest",
    "heads",
    "key_id",
    "signature",
    "prev_signature",
)
# Named workflows an export carries daily-seal proofs for (each reads the day's heads).
PROOFS_MAX = 20
FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
FORMAT_UNKNOWN = "format: csv or jsonl."
CURSOR_SALT = "approvals.audit.events.cursor"
_MAX_ID = 2**63 - 1
# Text a spreadsheet would run as a formula when it starts so.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

# What is read of each event: the event's own columns (the id only for the API's pages,
# which are not an export) and its workflow's recorded head.
_VALUES = {
    "event_id": "id",
    "workflow_id": "workflow_id",
    "seq": "seq",
    "type": "type",
    "role": "role",
    "prev_hash": "prev_hash",
    "hash": "hash",
    "tenant_id": "tenant_id",
    "created_at": "created_at",
    "payload": "payload",
    "request_id": "request_id",
    "actor_id": "actor_id",
    "on_behalf_of_id": "on_behalf_of_id",
    "schema_version": "schema_version",
    "result": "result",
    "recorded": "recorded",
    "hash_format": "hash_format",
    "workflow_version": "workflow__version",
    "workflow_last_hash": "workflow__last_hash",
}


@dataclass(frozen=True)
class ExportFilter:
    """Which events: all of them when every field is empty. ``since`` / ``until`` bound
    the event's time (``since`` included, ``until`` not); ``subject`` is a subject id or
    ``type:id``; ``person`` a username that acted (as the event recorded it) or
    submitted the workflow."""

    template: str | None = None
    status: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    subject: str | None = None
    person: str | None = None
    workflow_ids: Sequence[Any] | None = None

    @property
    def whole_histories(self) -> bool:
        """Does every workflow in the export come with all its events? A time or person
        filter leaves some out."""
        return self.since is None and self.until is None and not self.person


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
        # the name an event recorded (format 3), or the user row's for older events
        acted = Q(recorded__actor=f.person) | Q(recorded__isnull=True, actor__username=f.person)
        qs = qs.filter(acted | Q(workflow__submitter__username=f.person))
    if f.workflow_ids is not None:
        qs = qs.filter(workflow_id__in=list(f.workflow_ids))
    return qs.order_by("id")


def _archived_entries(*, tenant_id: int, filters: ExportFilter) -> QuerySet[ArchivedWorkflow]:
    """The index rows of the organisation's archived workflows (tombstones left out)
    whose events may match ``filters``: the filters ``audit_events`` asks of the events,
    asked of the index and of the workflows' rows, which stay. The events' own time and
    person are checked on each row read (``_archived_keep``)."""
    entries = archived_in_place().filter(tenant_id=tenant_id, deleted_at__isnull=True)
    f = filters
    if f.template:
        entries = entries.filter(template_key=f.template)
    if f.status:
        entries = entries.filter(
            workflow_id__in=Workflow.objects.filter(
                Q(public_status=f.status) | Q(status=f.status), tenant_id=tenant_id
            ).values("pk")
        )
    if f.subject:
        match = Q(subject_id=f.subject)
        if ":" in f.subject:
            kind, ident = f.subject.split(":", 1)
            match |= Q(subject_type=kind, subject_id=ident)
        entries = entries.filter(match)
    if f.workflow_ids is not None:
        entries = entries.filter(workflow_id__in=list(f.workflow_ids))
    if f.since is not None:
        entries = entries.filter(finished_at__gte=f.since)
    if f.until is not None:
        entries = entries.filter(started_at__lt=f.until)
    return entries


def _archived_keep(
    *, tenant_id: int, filters: ExportFilter, entries: QuerySet[ArchivedWorkflow]
) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an archived event of ``entries`` matches the filters on its own time and
    on the person who acted or submitted."""
    f = filters
    submitted: set[str] = set()
    if f.person:
        submitters = Workflow.objects.filter(
            tenant_id=tenant_id, submitter__username=f.person
        ).values_list("pk", flat=True)
        submitted = {str(pk) for pk in submitters.filter(pk__in=entries.values("workflow_id"))}

    def keep(row: Mapping[str, Any]) -> bool:
        if f.since is not None and dt.datetime.fromisoformat(row["created_at"]) < f.since:
            return False
        if f.until is not None and dt.datetime.fromisoformat(row["created_at"]) >= f.until:
            return False
        return not (f.person and row["workflow_id"] not in submitted and _acted(row) != f.person)

    return keep


def _archived_record(row: Mapping[str, Any], *, with_id: bool = False) -> dict[str, Any]:
    """An archived event as ``_record`` makes a live one (the archive keeps its row)."""
    record = {k: row[k] for k in _VALUES if with_id or k != "event_id"}
    record.update(shown_columns(record))
    return record


def _archived_rows(*, tenant_id: int, filters: ExportFilter) -> Iterator[dict[str, Any]]:
    """The matching events of the organisation's archived workflows, read from the
    archive store (approvals.audit.archived), before the database's: their months are
    the older ones."""
    entries = _archived_entries(tenant_id=tenant_id, filters=filters)
    keep = _archived_keep(tenant_id=tenant_id, filters=filters, entries=entries)
    for row in archived_export_rows(entries.order_by("month", "workflow_id").iterator(500)):
        if keep(row):
            yield _archived_record(row)


def _acted(row: Mapping[str, Any]) -> str | None:
    """The username an event recorded its actor by (format 3), else the user row's."""
    recorded = row.get("recorded")
    if isinstance(recorded, dict) and "actor" in recorded:
        return recorded["actor"]
    if row.get("actor_id") is None:
        return None
    return User.objects.filter(pk=row["actor_id"]).values_list("username", flat=True).first()


def _rows(qs: QuerySet[WorkflowEvent]) -> QuerySet[Any]:
    return qs.values_list(*_VALUES.values())


def _record(
    values: Sequence[Any], whole_histories: bool, *, with_id: bool = False
) -> dict[str, Any]:
    """One event as an export row: what its hash covers, and the columns derived from
    that alone (``shown_columns``), which the offline verifier derives again."""
    row = dict(zip(_VALUES, values, strict=True))
    if not with_id:
        del row["event_id"]
    row["workflow_id"] = str(row["workflow_id"])
    row["created_at"] = row["created_at"].isoformat()  # the text the hash covers
    row.update(shown_columns(row))
    if not whole_histories:
        row["workflow_version"] = row["workflow_last_hash"] = None
    return row


def audit_rows(
    *, tenant_id: int, filters: ExportFilter, sentences: Sentences | None = None
) -> Iterator[dict[str, Any]]:
    """Every matching event as a row, read through a server-side cursor on PostgreSQL
    (``APPROVALS_AUDIT_EXPORT_CHUNK`` rows per round trip); each with its ``sentence``
    when ``sentences`` says it."""
    qs = _rows(audit_events(tenant_id=tenant_id, filters=filters))
    whole = filters.whole_histories
    for row in _archived_rows(tenant_id=tenant_id, filters=filters):
        if not whole:
            row["workflow_version"] = row["workflow_last_hash"] = None
        if sentences is not None:
            row["sentence"] = sentences(row)
        yield row
    for values in qs.iterator(chunk_size=settings.APPROVALS_AUDIT_EXPORT_CHUNK):
        row = _record(values, whole)
        if sentences is not None:
            row["sentence"] = sentences(row)
        yield row


def seal_rows(*, tenant_id: int) -> Iterator[dict[str, Any]]:
    """The organisation's seals, each with what its signature covers: the seals from
    before the chain of seals by time, then the chain by number."""
    seals = ChainSeal.objects.filter(tenant_id=tenant_id).select_related("tenant")
    ordered = (
        seals.filter(number__isnull=True).order_by("sealed_at", "pk"),
        seals.filter(number__isnull=False).order_by("number", "pk"),
    )
    for qs in ordered:
        for seal in qs.iterator(50):
            yield {
                "number": seal.number,
                "tenant_id": seal.tenant_id,
                "tenant_slug": seal.tenant.slug if seal.tenant else "*",
                "sealed_at": seal.sealed_at.isoformat(),
                "count": seal.count,
                "digest": seal.digest,
                "heads": seal.heads,
                "key_id": seal.key_id,
                "signature": seal.signature,
                "prev_signature": seal.prev_signature,
            }


def daily_rows(*, tenant_id: int, filters: ExportFilter) -> Iterator[tuple[str, dict[str, Any]]]:
    """The organisation's daily seals (``daily_seal``), by day; and, when the export is
    of the whole histories of at most ``PROOFS_MAX`` named workflows, each one's proof
    (``proof``: its leaf and audit path) in the last day's seal."""
    seals = DailySeal.objects.filter(tenant_id=tenant_id).select_related("tenant")
    last = None
    for seal in seals.order_by("day").iterator(500):
        last = seal
        yield "daily_seal", seal_fields(seal)
    ids = filters.workflow_ids
    if last is None or ids is None or len(ids) > PROOFS_MAX or not filters.whole_histories:
        return
    for workflow_id in sorted(str(i) for i in ids):
        proof = inclusion_proof(tenant=last.tenant, workflow_id=workflow_id, day=last.day)
        if proof is not None:
            yield "proof", proof.as_dict()


def audit_export(
    *, tenant_id: int, filters: ExportFilter, fmt: str, sentences: Sentences | None = None
) -> Iterator[str]:
    """The export as text chunks (one per row, after the CSV header), read from the
    streaming replica when there is one fit to read (approvals.runtime.replica); the
    CSV's ``sentence`` column is empty unless ``sentences`` says each event's."""
    if fmt not in FORMATS:
        raise ValueError(FORMAT_UNKNOWN)
    return replica.streamed_from_replica(
        lambda: _export_lines(tenant_id=tenant_id, filters=filters, fmt=fmt, sentences=sentences)
    )


def _export_lines(
    *, tenant_id: int, filters: ExportFilter, fmt: str, sentences: Sentences | None
) -> Iterator[str]:
    if fmt == "jsonl":
        yield from _jsonl(tenant_id, filters, audit_rows(tenant_id=tenant_id, filters=filters))
        return
    rows = audit_rows(tenant_id=tenant_id, filters=filters, sentences=sentences)
    yield from csv_lines(CSV_COLUMNS, ([row.get(c, "") for c in CSV_COLUMNS] for row in rows))


def _line(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def _jsonl(tenant_id: int, filters: ExportFilter, rows: Iterator[dict[str, Any]]) -> Iterator[str]:
    """The events, the seals, the daily seals and proofs, then the export's signed
    statement of what it holds and which sealed workflows it leaves out."""
    tally = _Tally()
    for row in rows:
        tally.add(row)
        yield _line(row)
    named: set[str] = set()
    for seal in seal_rows(tenant_id=tenant_id):
        named.update(str(w) for w in seal["heads"])
        yield _line({"seal": seal})
    for kind, line in daily_rows(tenant_id=tenant_id, filters=filters):
        if kind == "proof":
            named.add(str(line["workflow_id"]))
        yield _line({kind: line})
    yield _line({"export": tally.statement(tenant_id, filters, named)})


class _Tally:
    """What the statement says of the events, counted as they are written."""

    def __init__(self) -> None:
        self.events = 0
        self.digest = hashlib.sha256()
        self.workflows: set[str] = set()

    def add(self, row: dict[str, Any]) -> None:
        self.events += 1
        self.digest.update(events_line(row["workflow_id"], row["seq"], row["hash"]))
        self.workflows.add(row["workflow_id"])

    def statement(self, tenant_id: int, filters: ExportFilter, named: set[str]) -> dict[str, Any]:
        tenant = Tenant.objects.filter(pk=tenant_id).values_list("slug", flat=True).first()
        statement: dict[str, Any] = {
            "format": STATEMENT_FORMAT,
            "tenant_id": tenant_id,
            "tenant_slug": tenant,
            "filters": _filter_words(filters),
            "events": self.events,
            "digest": self.digest.hexdigest(),
            "left_out": sorted(named - self.workflows),
            "key_id": None,
            "signature": None,
        }
        try:
            key = seal_key()
        except SealKeyMissing:
            return statement  # unsigned: the verifier with the key says so
        statement["key_id"] = key_id(key)
        statement["signature"] = statement_signature(statement, key)
        return statement


def _filter_words(filters: ExportFilter) -> dict[str, Any]:
    """The filters that chose the export's events, as text (none when empty)."""
    words = {k: v for k, v in vars(filters).items() if v not in (None, "")}
    if filters.workflow_ids is not None:
        words["workflow_ids"] = sorted(str(i) for i in filters.workflow_ids)
    return {k: v if k == "workflow_ids" else str(v) for k, v in words.items()}


def csv_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    """A CSV as text chunks, one a line (the header first), each cell made safe to open
    in a spreadsheet (``csv_cell``): for a streamed response."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def line(values: Sequence[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(values)
        return buffer.getvalue()

    yield line(header)
    for row in rows:
        yield line([csv_cell(value) for value in row])


def csv_cell(value: Any) -> Any:
    """Every text cell, not only the typed ones: a user name (actor, on behalf of), a
    step id or a subject type comes from a person too. Ids, times and hashes never
    start so, and are left as they are."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


_cell = csv_cell  # its former name, which other exports import


def export_filename(*, tenant_slug: str, fmt: str, at: dt.datetime) -> str:
    return f"audit-{tenant_slug}-{at:%Y%m%dT%H%M%SZ}.{fmt}"


@dataclass(frozen=True)
class EventPage:
    rows: list[dict[str, Any]]
    next_cursor: str | None


# The paged events' refusals (the API's 400 and 503), in words.
PERSON_NOT_PAGED = (
    "person cannot filter the paged events of an organisation with archived history: "
    "an archived month's events are kept in one file, and finding one person's events "
    "in it means reading the whole archive for every page. Download the export "
    "(GET /api/audit/export?person=...), which reads each archived month once."
)
INDEX_STALE = (
    "The index of archived requests was written before it kept the events' ids, so "
    "archived events cannot be placed on pages yet; an operator runs "
    "`manage.py index_archived` once, then the pages answer."
)


class FilterNotPaged(ValueError):
    """A filter the paged events cannot answer completely; said in words."""


class IndexStale(RuntimeError):
    """Archived workflows indexed without their events' ids; said in words."""


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


@replica.replica_read
def audit_page(
    *, tenant_id: int, filters: ExportFilter, limit: int, cursor: str | None = None
) -> EventPage:
    """One page of matching events after ``cursor``, by event id (the primary key:
    stable while events are appended, each event on exactly one page), the database's
    and the archived ones merged (``archived`` says which), so a page is the same
    before and after its month goes to the archive or comes back, and a cursor goes on
    across the two. Raises FilterNotPaged for a person filter once there is archived
    history, IndexStale while the index lacks the events' ids."""
    after = _decode(cursor) if cursor else 0
    qs = audit_events(tenant_id=tenant_id, filters=filters)
    if after:
        qs = qs.filter(id__gt=after)
    whole = filters.whole_histories
    rows = [{**_record(v, whole, with_id=True), "archived": False} for v in _rows(qs)[: limit + 1]]
    archived = _archived_page(
        tenant_id=tenant_id, filters=filters, after=after, live=rows, need=limit + 1
    )
    for row in archived:
        if not whole:
            row["workflow_version"] = row["workflow_last_hash"] = None
        rows.append(row)
    rows.sort(key=lambda r: r["event_id"])
    more = len(rows) > limit
    rows = rows[:limit]
    return EventPage(rows, _encode(rows[-1]["event_id"]) if more and rows else None)


def _archived_page(
    *,
    tenant_id: int,
    filters: ExportFilter,
    after: int,
    live: list[dict[str, Any]],
    need: int,
) -> list[dict[str, Any]]:
    """The archived events after ``after`` that may fall among the first ``need``
    beside ``live`` (the database's first ``need`` after it): the index rows are taken
    by their first event id, and reading stops at the first whose first event comes
    after the last one that can still be on the page (the ``need``-th smallest id found
    so far, counting the database's). Each events file is read once per batch."""
    entries = _archived_entries(tenant_id=tenant_id, filters=filters).filter(
        Q(last_event_id__gt=after) | Q(last_event_id__isnull=True)
    )
    if filters.person and entries.exists():
        raise FilterNotPaged(PERSON_NOT_PAGED)
    if entries.filter(first_event_id__isnull=True).exists():
        raise IndexStale(INDEX_STALE)
    ids = sorted(r["event_id"] for r in live)
    keep = _archived_keep(tenant_id=tenant_id, filters=filters, entries=entries)
    found: list[dict[str, Any]] = []

    def last_possible() -> int:
        return ids[need - 1] if len(ids) >= need else _MAX_ID

    def read(batch: list[ArchivedWorkflow]) -> None:
        for row in archived_export_rows(batch):
            if row["event_id"] > after and row["event_id"] <= last_possible() and keep(row):
                found.append({**_archived_record(row, with_id=True), "archived": True})
                ids.append(row["event_id"])
        ids.sort()
        del ids[need:]

    batch: list[ArchivedWorkflow] = []
    events = 0
    for entry in entries.order_by("first_event_id", "workflow_id").iterator(200):
        if entry.first_event_id is not None and entry.first_event_id > last_possible():
            break
        batch.append(entry)
        events += entry.events
        if events >= need:
            read(batch)
            batch, events = [], 0
    read(batch)
    return found
