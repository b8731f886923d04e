"""The comments of an organisation, newest first, in an index of their own.

A person's open questions (approvals/selectors/questions.py: comments that named them,
on their inbox page and My requests) were found by reading every event of their
organisation: at ten million events, 277 ms and 54,603 buffers for the largest one per
inbox page, where the comments are a small share of the events. The index holds the
comments only (``type = 'CommentAdded'``: a partial index), by organisation and time,
so the page walks its organisation's newest comments. Its columns are compared with
leakproof operators, so PostgreSQL uses it under row-level security too (a GIN index on
the mentions would not be: ``@>`` is not leakproof).

Without a long lock on a filled table: the parent's index is made on the parent only
(invalid, building nothing), each partition's index is built concurrently (writes go on;
hence a migration that is not atomic) and attached, which makes the parent's valid. A
build cut short leaves an invalid index behind: dropped and built again by the next run.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

EVENTS = "approvals_workflowevent"
INDEX = "event_comments"
COLUMNS = "tenant_id, created_at DESC"
WHERE = "type = 'CommentAdded'"


def _partitions(cursor: Any) -> list[str]:
    cursor.execute(
        "SELECT inhrelid::regclass::text FROM pg_inherits"
        f" WHERE inhparent = '{EVENTS}'::regclass ORDER BY 1"
    )
    return [row[0] for row in cursor.fetchall()]


def _attached(cursor: Any, part: str) -> bool:
    """Whether ``part`` already has an index attached to the parent's."""
    cursor.execute(
        "SELECT 1 FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid"
        " WHERE i.inhparent = %s::regclass AND x.indrelid = %s::regclass",
        [INDEX, part],
    )
    return cursor.fetchone() is not None


def forwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {INDEX} ON ONLY {EVENTS} ({COLUMNS}) WHERE {WHERE}"
        )
        for part in _partitions(cursor):
            if _attached(cursor, part):
                continue
            name = f"{part}_comments"
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            cursor.execute(f"CREATE INDEX CONCURRENTLY {name} ON {part} ({COLUMNS}) WHERE {WHERE}")
            cursor.execute(f"ALTER INDEX {INDEX} ATTACH PARTITION {name}")


def backwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("approvals", "0210_archived_event_ids")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards, elidable=False)],
            state_operations=[
                migrations.AddIndex(
                    model_name="workflowevent",
                    index=models.Index(
                        models.F("tenant"),
                        models.F("created_at").desc(),
                        condition=models.Q(type="CommentAdded"),
                        name=INDEX,
                    ),
                )
            ],
        )
    ]
