"""The unique keys of the events, tasks, timers and participants include ``tenant_id``,
so that distributing the tables by tenant later needs no change of key.

The tenant goes last: the keys keep their leading columns, so every read and write that
found its rows through them (by workflow) still does, and the command path's statements
are unchanged (their ``ON CONFLICT DO NOTHING`` names no key).

Without a long lock on a filled table: each new key's index is built with ``CREATE
UNIQUE INDEX CONCURRENTLY`` (writes go on; hence a migration that is not atomic), then
swapped in, in one short transaction, for the old key of the same name (``ADD
CONSTRAINT ... USING INDEX`` builds nothing). The events are partitioned: each
partition's index is built concurrently, then the parent's key is added on the parent
only and each partition's attached to it (the partitioning chapter's recipe), which
builds nothing either. The swaps wait at most ``LOCK_TIMEOUT`` for their lock and fail
rather than queue writes behind them; run again, the migration builds what is missing.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models, transaction

LOCK_TIMEOUT = "5s"
EVENTS = "approvals_workflowevent"
# (table, key, its columns with the tenant)
KEYS = (
    ("approvals_pendingtask", "task_unique", "workflow_id, step, assignee_id, tenant_id"),
    ("approvals_timer", "timer_key", "workflow_id, key, tenant_id"),
    ("approvals_workflowparticipant", "participant_unique", "workflow_id, user_id, tenant_id"),
)
EVENT_KEYS = (
    ("event_seq", "workflow_id, seq, history_month, tenant_id"),
    ("event_request_id", "workflow_id, request_id, history_month, tenant_id"),
)


def _build(cursor: Any, index: str, table: str, columns: str) -> None:
    """The unique index, built while writes go on (a build cut short leaves an invalid
    index behind: dropped first)."""
    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {index}")
    cursor.execute(f"CREATE UNIQUE INDEX CONCURRENTLY {index} ON {table} ({columns})")


def _swap(connection: Any, statements: list[str]) -> None:
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        for statement in statements:
            cursor.execute(statement)


def _partitions(cursor: Any) -> list[str]:
    cursor.execute(
        "SELECT inhrelid::regclass::text FROM pg_inherits"
        f" WHERE inhparent = '{EVENTS}'::regclass ORDER BY 1"
    )
    return [row[0] for row in cursor.fetchall()]


def forwards(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for table, key, columns in KEYS:
            _build(cursor, f"{key}_t", table, columns)
            _swap(
                connection,
                [
                    f"ALTER TABLE {table} DROP CONSTRAINT {key}",
                    f"ALTER TABLE {table} ADD CONSTRAINT {key} UNIQUE USING INDEX {key}_t",
                ],
            )
        partitions = _partitions(cursor)
        for key, columns in EVENT_KEYS:
            for part in partitions:
                _build(cursor, f"{part}_{key}_t", part, columns)
            statements = [
                f"ALTER TABLE {EVENTS} DROP CONSTRAINT {key}",
                f"ALTER TABLE ONLY {EVENTS} ADD CONSTRAINT {key} UNIQUE ({columns})",
            ]
            for part in partitions:
                statements += [
                    f"ALTER TABLE {part} ADD CONSTRAINT {part}_{key}"
                    f" UNIQUE USING INDEX {part}_{key}_t",
                    f"ALTER INDEX {key} ATTACH PARTITION {part}_{key}",
                ]
            _swap(connection, statements)


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("approvals", "0090_held_decisions")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)
            ],
            state_operations=[
                migrations.RemoveConstraint(model_name="pendingtask", name="task_unique"),
                migrations.AddConstraint(
                    model_name="pendingtask",
                    constraint=models.UniqueConstraint(
                        fields=["workflow", "step", "assignee", "tenant"], name="task_unique"
                    ),
                ),
                migrations.RemoveConstraint(model_name="timer", name="timer_key"),
                migrations.AddConstraint(
                    model_name="timer",
                    constraint=models.UniqueConstraint(
                        fields=["workflow", "key", "tenant"], name="timer_key"
                    ),
                ),
                migrations.RemoveConstraint(
                    model_name="workflowparticipant", name="participant_unique"
                ),
                migrations.AddConstraint(
                    model_name="workflowparticipant",
                    constraint=models.UniqueConstraint(
                        fields=["workflow", "user", "tenant"], name="participant_unique"
                    ),
                ),
                migrations.RemoveConstraint(model_name="workflowevent", name="event_seq"),
                migrations.AddConstraint(
                    model_name="workflowevent",
                    constraint=models.UniqueConstraint(
                        fields=["workflow", "seq", "history_month", "tenant"], name="event_seq"
                    ),
                ),
                migrations.RemoveConstraint(model_name="workflowevent", name="event_request_id"),
                migrations.AddConstraint(
                    model_name="workflowevent",
                    constraint=models.UniqueConstraint(
                        fields=["workflow", "request_id", "history_month", "tenant"],
                        name="event_request_id",
                    ),
                ),
            ],
        )
    ]
