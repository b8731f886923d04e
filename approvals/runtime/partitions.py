"""The monthly partitions of the workflow events (PostgreSQL; see migration 0029).

``history_partitions_ensure`` creates the partitions of this month and the next
APPROVALS_HISTORY_MONTHS_AHEAD, once a day from the periodic jobs, so a workflow that
starts is always written into its own month's partition. The default partition catches
a row whose month has none (the job stopped for months): the insert still succeeds, the
attention-worthy count is ``history_default_rows``, and the month's partition can be
created once those rows are moved. Our own job rather than pg_partman: it is twenty
lines, needs no extension installed by a superuser, and the archiver needs the same
month arithmetic anyway."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import connection

from .. import clock
from ..models import WorkflowEvent

EVENTS = WorkflowEvent._meta.db_table


def month_add(month: dt.date, n: int) -> dt.date:
    index = month.year * 12 + month.month - 1 + n
    return dt.date(index // 12, index % 12 + 1, 1)


def partition_name(month: dt.date) -> str:
    return f"{EVENTS}_p{month:%Y%m}"


def history_partitions() -> list[str]:
    """The names of the events table's partitions, oldest first (default last)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = %s::regclass ORDER BY c.relname",
            [EVENTS],
        )
        names = [row[0] for row in cursor.fetchall()]
    return sorted(names, key=lambda n: (n.endswith("_default"), n))


def history_partitions_ensure(*, months_ahead: int | None = None) -> list[str]:
    """Create the missing partitions from this month to ``months_ahead`` months on;
    returns the names created."""
    ahead = settings.APPROVALS_HISTORY_MONTHS_AHEAD if months_ahead is None else months_ahead
    this_month = clock.now().astimezone(dt.UTC).date().replace(day=1)
    have = set(history_partitions())
    created = []
    with connection.cursor() as cursor:
        for n in range(ahead + 1):
            month = month_add(this_month, n)
            name = partition_name(month)
            if name in have:
                continue
            cursor.execute(
                f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF {EVENTS} '
                f"FOR VALUES FROM (%s) TO (%s)",
                [month, month_add(month, 1)],
            )
            cursor.execute(unreachable_sql(name))
            cursor.execute(tenant_statistics_sql(name))
            created.append(name)
    return created


# Migration 0041: each organisation's share of a partition known to the planner (the
# column's statistics target is not inherited by a new partition).
TENANT_STATISTICS = 1000


def tenant_statistics_sql(partition: str) -> str:
    return f'ALTER TABLE "{partition}" ALTER COLUMN tenant_id SET STATISTICS {TENANT_STATISTICS}'


def unreachable_sql(partition: str) -> str:
    """A partition is read through its parent, whose row-level security policy holds
    (migration 0035): the tenants' role gets no privilege on the partition itself, or a
    query naming it would read round the policy."""
    return (
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'approvals_app')"
        f' THEN REVOKE ALL ON "{partition}" FROM approvals_app; END IF; END $$'
    )


def history_default_rows() -> int:
    """Events that landed in the default partition (their month had none)."""
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT count(*) FROM "{EVENTS}_default"')
        return int(cursor.fetchone()[0])
