"""Restore: an archived month's events put back in the database, for an investigation.

``month_restore`` checks every organisation's archive of the month (approvals.audit.
archive's ``archive_check``, with the rows) and puts the events back in a partition of
their own, in one transaction, with the ids and hashes they had; ``archive_history``
moves the month out again without writing it twice."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction

from ..runtime.partitions import (
    EVENTS,
    month_add,
    partition_name,
    tenant_statistics_sql,
    unreachable_sql,
)
from .archive import CHUNK, ArchiveCheck, archive_check, month_lock, partition_state
from .models import ArchivedMonth
from .retention import ArchiveError, month_words

NOT_ARCHIVED = "{month} is not archived: its events are in the database."
NO_ARCHIVE = "{month} has no archive to restore."

_INSERT_COLUMNS = (
    "id",
    "tenant_id",
    "workflow_id",
    "seq",
    "type",
    "schema_version",
    "payload",
    "request_id",
    "result",
    "actor_id",
    "role",
    "on_behalf_of_id",
    "created_at",
    "prev_hash",
    "hash",
    "hash_format",
    "recorded",
    "history_month",
)


def month_restore(month: dt.date) -> dict[int, int]:
    """Check ``month``'s archives and put their events back in the month's partition,
    in one transaction; returns tenant id -> events restored."""
    with month_lock(month):
        return _month_restore(month)


def _month_restore(month: dt.date) -> dict[int, int]:
    recorded = list(ArchivedMonth.objects.filter(month=month).order_by("tenant_id"))
    if not recorded:
        raise ArchiveError(NO_ARCHIVE.format(month=month_words(month)))
    if any(r.dropped_at is None for r in recorded):
        raise ArchiveError(NOT_ARCHIVED.format(month=month_words(month)))
    checks = [archive_check(r.tenant_id, month, rows=True) for r in recorded]
    problems = [p for c in checks for p in c.problems]
    if problems:
        raise ArchiveError(
            "The archive does not check out; nothing was restored:\n" + "\n".join(problems)
        )
    name = partition_name(month)
    placeholders = ",".join(["%s"] * len(_INSERT_COLUMNS))
    sql = f'INSERT INTO "{name}" ({",".join(_INSERT_COLUMNS)}) VALUES ({placeholders})'
    restored: dict[int, int] = {}
    with transaction.atomic():
        exists, attached = partition_state(name)
        with connection.cursor() as cursor:
            if exists and not attached:
                cursor.execute(f'DROP TABLE "{name}"')  # left empty by a run that stopped
            cursor.execute(
                f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF {EVENTS} '
                f"FOR VALUES FROM (%s) TO (%s)",
                [month, month_add(month, 1)],
            )
            cursor.execute(unreachable_sql(name))  # as a partition made ahead is
            cursor.execute(tenant_statistics_sql(name))
            cursor.execute(f'SELECT count(*) FROM "{name}"')
            if cursor.fetchone()[0]:
                raise ArchiveError(
                    f"{month_words(month)} already has events in the database: not restored again."
                )
            for check in checks:
                rows = list(_restore_rows(check, month))
                for start in range(0, len(rows), CHUNK):
                    cursor.executemany(sql, rows[start : start + CHUNK])
                restored[check.tenant_id] = len(rows)
        ArchivedMonth.objects.filter(month=month).update(dropped_at=None)
    return restored


def _restore_rows(check: ArchiveCheck, month: dt.date) -> Iterator[tuple[Any, ...]]:
    """The archived events as ``_INSERT_COLUMNS`` rows, by event id."""
    rows = []
    for events in check.events.values():
        for e in events:
            wid, seq, type_, payload, request_id, actor_id, role, obo, created, prev = e[:10]
            tenant_id, schema_version, result, hash_format, recorded, hash_ = e[10:]
            rows.append(
                (
                    check.ids[(wid, seq)],
                    tenant_id,
                    wid,
                    seq,
                    type_,
                    schema_version,
                    json.dumps(payload),
                    request_id,
                    None if result is None else json.dumps(result),
                    actor_id,
                    role,
                    obo,
                    created,
                    prev,
                    hash_,
                    hash_format,
                    None if recorded is None else json.dumps(recorded),
                    month,
                )
            )
    rows.sort(key=lambda r: r[0])
    yield from rows
