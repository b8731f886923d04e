"""The events' indexes hold only the events that name what they index: fewer entries
written by every command.

A decision appends about four events, and each was written into every index of the
events. Three of those indexes serve lookups of a value that most events do not have:

- ``event_request_id`` (workflow, request_id, month, tenant), the repeated request's
  check: only the first event of a command that carried a request id has one.
- the index on ``actor_id``, for the check that a person deleted acted in no event
  (``on_delete=PROTECT`` and the foreign key's own check): the timers' and the system's
  events have no actor.
- the index on ``on_behalf_of_id``, the same for a delegate's principal: only the
  events a delegate wrote name one.

Each becomes a partial index of the rows where the column is not NULL. A lookup
``col = value`` implies ``col IS NOT NULL``, so PostgreSQL takes the partial index where
it took the full one, and a unique index never compared NULLs, so ``event_request_id``
keeps the same uniqueness (a partial unique index, no longer a constraint: the inserts
name no conflict target). The actor's and the delegate's become ``event_actor`` and
``event_on_behalf_of``.

Without a long lock on a filled table, as migration 0220: each parent index is made on
the parent only, each partition's built concurrently and attached (hence not atomic); a
build cut short leaves an invalid index behind, dropped and built again by the next run.
The old indexes are then dropped on the parent, which drops the partitions' copies.
"""

from __future__ import annotations

from typing import Any

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

EVENTS = "approvals_workflowevent"
# name: (unique, columns, predicate, suffix of the partitions' indexes)
NEW = {
    "event_actor": (False, "actor_id", "actor_id IS NOT NULL", "actor"),
    "event_on_behalf_of": (False, "on_behalf_of_id", "on_behalf_of_id IS NOT NULL", "behalf"),
    "event_request_id_named": (
        True,
        "workflow_id, request_id, history_month, tenant_id",
        "request_id IS NOT NULL",
        "request",
    ),
}
OLD_ACTOR = "approvals_workflowevent_actor_id_d86ebdd8"
OLD_BEHALF = "approvals_workflowevent_on_behalf_of_id_66dbb5ad"


def _partitions(cursor: Any) -> list[str]:
    cursor.execute(
        "SELECT inhrelid::regclass::text FROM pg_inherits"
        f" WHERE inhparent = '{EVENTS}'::regclass ORDER BY 1"
    )
    return [row[0] for row in cursor.fetchall()]


def _attached(cursor: Any, index: str, part: str) -> bool:
    """Whether ``part`` already has an index attached to the parent's ``index``."""
    cursor.execute(
        "SELECT 1 FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid"
        " WHERE i.inhparent = %s::regclass AND x.indrelid = %s::regclass",
        [index, part],
    )
    return cursor.fetchone() is not None


def _exists(cursor: Any, index: str) -> bool:
    cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [index])
    return bool(cursor.fetchone()[0])


def forwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM pg_constraint WHERE conname = 'event_request_id'"
            f" AND conrelid = '{EVENTS}'::regclass"
        )
        request_key_is_constraint = cursor.fetchone() is not None
        for index, (unique, columns, where, suffix) in NEW.items():
            if index == "event_request_id_named" and not request_key_is_constraint:
                continue  # done by an earlier run: renamed to event_request_id
            kind = "UNIQUE INDEX" if unique else "INDEX"
            cursor.execute(
                f"CREATE {kind} IF NOT EXISTS {index} ON ONLY {EVENTS} ({columns})"
                f" WHERE {where}"
            )
            for part in _partitions(cursor):
                if _attached(cursor, index, part):
                    continue
                name = f"{part}_{suffix}"
                cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
                cursor.execute(
                    f"CREATE {kind} CONCURRENTLY {name} ON {part} ({columns}) WHERE {where}"
                )
                cursor.execute(f"ALTER INDEX {index} ATTACH PARTITION {name}")
        if request_key_is_constraint:
            cursor.execute(f"ALTER TABLE {EVENTS} DROP CONSTRAINT event_request_id")
            cursor.execute("ALTER INDEX event_request_id_named RENAME TO event_request_id")
        cursor.execute(f"DROP INDEX IF EXISTS {OLD_ACTOR}")
        cursor.execute(f"DROP INDEX IF EXISTS {OLD_BEHALF}")


def backwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {OLD_ACTOR} ON {EVENTS} (actor_id)")
        cursor.execute(f"CREATE INDEX IF NOT EXISTS {OLD_BEHALF} ON {EVENTS} (on_behalf_of_id)")
        cursor.execute("DROP INDEX IF EXISTS event_actor")
        cursor.execute("DROP INDEX IF EXISTS event_on_behalf_of")
        cursor.execute("DROP INDEX IF EXISTS event_request_id")
        cursor.execute(
            f"ALTER TABLE {EVENTS} ADD CONSTRAINT event_request_id"
            " UNIQUE (workflow_id, request_id, history_month, tenant_id)"
        )


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("approvals", "0220_event_comments"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards, elidable=False)],
            state_operations=[
                migrations.RemoveConstraint(model_name="workflowevent", name="event_request_id"),
                migrations.AddConstraint(
                    model_name="workflowevent",
                    constraint=models.UniqueConstraint(
                        condition=models.Q(("request_id__isnull", False)),
                        fields=("workflow", "request_id", "history_month", "tenant"),
                        name="event_request_id",
                    ),
                ),
                migrations.AlterField(
                    model_name="workflowevent",
                    name="actor",
                    field=models.ForeignKey(
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="workflowevent",
                    name="on_behalf_of",
                    field=models.ForeignKey(
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AddIndex(
                    model_name="workflowevent",
                    index=models.Index(
                        condition=models.Q(("actor__isnull", False)),
                        fields=["actor"],
                        name="event_actor",
                    ),
                ),
                migrations.AddIndex(
                    model_name="workflowevent",
                    index=models.Index(
                        condition=models.Q(("on_behalf_of__isnull", False)),
                        fields=["on_behalf_of"],
                        name="event_on_behalf_of",
                    ),
                ),
            ],
        )
    ]
