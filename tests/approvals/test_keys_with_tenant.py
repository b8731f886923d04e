"""The unique keys of the events, tasks, timers and participants include the tenant
(migration 0120), so distributing them by tenant needs no change of key; the events'
keys hold on every partition, a new month's included."""

from __future__ import annotations

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

KEYS = {
    "task_unique": ("approvals_pendingtask", "workflow_id, step, assignee_id, tenant_id"),
    "timer_key": ("approvals_timer", "workflow_id, key, tenant_id"),
    "participant_unique": ("approvals_workflowparticipant", "workflow_id, user_id, tenant_id"),
    "event_seq": ("approvals_workflowevent", "workflow_id, seq, history_month, tenant_id"),
    "event_request_id": (
        "approvals_workflowevent",
        "workflow_id, request_id, history_month, tenant_id",
    ),
}


def _rows(sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return list(cursor.fetchall())


# A unique index of the rows that carry a request id (migration 0230): NULLs never
# collide, so the same uniqueness; a partial index is not a constraint.
PARTIAL = {"event_request_id": " WHERE (request_id IS NOT NULL)"}


@pytest.mark.parametrize("key", sorted(KEYS))
def test_each_unique_key_ends_with_the_tenant_and_is_a_valid_constraint(key):
    table, columns = KEYS[key]
    ((definition, valid, kind),) = _rows(
        "SELECT pg_get_indexdef(i.indexrelid), i.indisvalid, c.contype"
        " FROM pg_index i LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid"
        " WHERE i.indexrelid = %s::regclass AND i.indrelid = %s::regclass",
        [key, table],
    )

    assert definition.endswith(f"({columns}){PARTIAL.get(key, '')}")
    assert "UNIQUE" in definition
    assert valid is True
    assert kind == (None if key in PARTIAL else "u")


@pytest.mark.parametrize("key", ["event_seq", "event_request_id"])
def test_every_event_partition_holds_the_key_with_the_tenant(key):
    partitions = _rows(
        "SELECT inhrelid::regclass::text FROM pg_inherits"
        " WHERE inhparent = 'approvals_workflowevent'::regclass"
    )
    attached = _rows(
        "SELECT pg_get_indexdef(inhrelid) FROM pg_inherits WHERE inhparent = %s::regclass",
        [key],
    )

    assert partitions
    assert len(attached) == len(partitions)
    assert all(d.endswith(f"({KEYS[key][1]}){PARTIAL.get(key, '')}") for (d,) in attached)
