"""Archived workflows read in place: a workflow whose month went to the archive store
(approvals.audit.archive) keeps its row, and ``ArchivedWorkflow`` (the live index) says
where its events are. Its page, the API, the search and the export read them from the
store through that row, checked on the way (every hash recomputed and chained, ending at
the chain head the signed manifest recorded), and say it is archived.

A workflow is read from the archive while its index row stands, is not a tombstone, and
its organisation's month has left the database (``ArchivedMonth.dropped_at``); once the
month is restored its events are the database's again and the index row is ignored.
Nothing here writes: the index is filled by approvals.audit.archived_index."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.core.files.storage import storages

from ..models import User
from ..runtime.archived import archived_in_place
from . import offline_verify
from .models import ArchivedMonth, ArchivedWorkflow

ALIAS = "archive"  # the archive store (approvals.audit.archive.ALIAS)

READ_WORDS = "Archived on {at}; read from the archive."
DELETED_WORDS = "Deleted on {at} after its retention ended: {reason}"
UNREADABLE = "The archived history of this request cannot be read: {problem}."


class ArchiveReadError(Exception):
    """The archived events are gone or do not check out; said in words."""


@dataclass(frozen=True)
class ArchivedState:
    """What a reader is told of an archived workflow."""

    entry: ArchivedWorkflow
    archived_at: dt.datetime | None  # when its month left the database
    deleted: bool

    @property
    def words(self) -> str:
        if self.deleted and self.entry.deleted_at is not None:
            return DELETED_WORDS.format(
                at=day_words(self.entry.deleted_at), reason=self.entry.deleted_reason
            )
        return READ_WORDS.format(at=day_words(self.archived_at or self.entry.indexed_at))


def day_words(at: dt.datetime) -> str:
    return f"{at.day} {at:%b %Y}"


def workflow_archived(*, tenant_id: int, workflow_id: uuid.UUID | str) -> ArchivedState | None:
    """The archived state of one workflow, None while its events are in the database."""
    entry = archived_in_place().filter(tenant_id=tenant_id, workflow_id=workflow_id).first()
    if entry is None:
        return None
    month = ArchivedMonth.objects.filter(tenant_id=tenant_id, month=entry.month).first()
    return ArchivedState(
        entry=entry,
        archived_at=month.dropped_at if month is not None else None,
        deleted=entry.deleted_at is not None,
    )


def _lines(entry: ArchivedWorkflow) -> Iterator[bytes]:
    """The unpacked lines of the byte range the index names."""
    storage = storages[ALIAS]
    if not entry.data_name or not storage.exists(entry.data_name):
        raise ArchiveReadError(UNREADABLE.format(problem="its events file is gone"))
    try:
        with (
            storage.open(entry.data_name, "rb") as packed,
            gzip.GzipFile(fileobj=packed, mode="rb") as plain,
        ):
            plain.seek(entry.offset)
            block = plain.read(entry.length)
    except (OSError, EOFError):
        raise ArchiveReadError(
            UNREADABLE.format(problem="its events file cannot be unpacked")
        ) from None
    yield from block.splitlines()


def archived_rows(entry: ArchivedWorkflow) -> list[dict[str, Any]]:
    """The workflow's archived events as the audit export's rows (with ``event_id``),
    by seq, checked: each hash recomputes, each names the one before, and the last is
    the head the manifest signed. Raises ArchiveReadError, in words, otherwise."""
    if entry.deleted_at is not None:
        raise ArchiveReadError(
            DELETED_WORDS.format(at=day_words(entry.deleted_at), reason=entry.deleted_reason)
        )
    wid = str(entry.workflow_id)
    rows = []
    for line in _lines(entry):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise ArchiveReadError(UNREADABLE.format(problem="a line is not JSON")) from None
        if row.get("workflow_id") == wid:
            rows.append(row)
    rows.sort(key=lambda r: r["seq"])
    prev = ""
    for expected_seq, row in enumerate(rows, start=1):
        if row["seq"] != expected_seq or offline_verify.event_hash(row) != row["hash"]:
            raise ArchiveReadError(
                UNREADABLE.format(problem=f"event {row['seq']} does not recompute to its hash")
            )
        if expected_seq > 1 and row["prev_hash"] != prev:
            raise ArchiveReadError(
                UNREADABLE.format(problem=f"event {row['seq']} does not follow the one before")
            )
        prev = row["hash"]
    last = (rows[-1]["seq"], rows[-1]["hash"]) if rows else (0, "")
    if last != (entry.head_seq, entry.head_hash):
        raise ArchiveReadError(
            UNREADABLE.format(problem="its last event is not the head the manifest signed")
        )
    return rows


def usernames(rows: Iterable[dict[str, Any]]) -> dict[int, str]:
    """user id -> username of the actors and principals the rows name (one query)."""
    ids = {r[k] for r in rows for k in ("actor_id", "on_behalf_of_id") if r.get(k) is not None}
    if not ids:
        return {}
    return dict(User.objects.filter(pk__in=ids).values_list("pk", "username"))


def when(row: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(row["created_at"])


def archived_export_rows(entries: Iterable[ArchivedWorkflow]) -> Iterator[dict[str, Any]]:
    """The archived events of ``entries`` (tombstones left out) as export rows, each
    month's events file read once, in its order (by event id), each event checked as
    ``archived_rows`` checks it. Raises ArchiveReadError, in words, on the first that
    does not check out."""
    by_file: dict[str, dict[str, ArchivedWorkflow]] = {}
    for entry in entries:
        if entry.deleted_at is None:
            by_file.setdefault(entry.data_name, {})[str(entry.workflow_id)] = entry
    for data_name, wanted in sorted(by_file.items()):
        heads: dict[str, tuple[int, str]] = {}
        start = min(e.offset for e in wanted.values())
        end = max(e.offset + e.length for e in wanted.values())
        span = ArchivedWorkflow(data_name=data_name, offset=start, length=end - start)
        for line in _lines(span):
            if not line.strip():
                continue
            row = json.loads(line)
            wid = row.get("workflow_id")
            if wid not in wanted:
                continue
            seq, prev = heads.get(wid, (0, ""))
            if (
                row["seq"] != seq + 1
                or offline_verify.event_hash(row) != row["hash"]
                or (seq and row["prev_hash"] != prev)
            ):
                raise ArchiveReadError(
                    UNREADABLE.format(problem=f"workflow {wid} event {row['seq']} does not check")
                )
            heads[wid] = (row["seq"], row["hash"])
            yield row
        for wid, entry in wanted.items():
            if heads.get(wid, (0, "")) != (entry.head_seq, entry.head_hash):
                raise ArchiveReadError(
                    UNREADABLE.format(problem=f"workflow {wid} does not end at its signed head")
                )
