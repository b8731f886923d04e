"""Workflow events partitioned by month.

Every event carries ``history_month``: the first day of the UTC month its workflow
started in. A workflow's whole history therefore lives in one partition, so the unique
constraints that hold the engine's guarantees, ``(workflow, seq)`` and ``(workflow,
request_id)``, still hold with the partition key added to them (PostgreSQL requires it
in every unique constraint of a partitioned table), and a month whose workflows have all
finished can be detached and archived whole.

The table is rebuilt as ``PARTITION BY RANGE (history_month)``: monthly partitions for
every month the rows need and three ahead (the periodic job ``history_partitions_ensure``
keeps them ahead), plus a default partition that catches a row whose month has no
partition yet, so an insert never fails for want of one. The append-only triggers are
created on the partitioned table (PostgreSQL puts them on every partition).
"""

from __future__ import annotations

import datetime as dt

from django.db import migrations, models

EVENTS = "approvals_workflowevent"
OLD = "approvals_workflowevent_unpartitioned"
MONTHS_AHEAD = 3

_INDEXES = {
    # name: columns, as Django named them (its state keeps the names)
    "approvals_workflowevent_actor_id_d86ebdd8": "(actor_id)",
    "approvals_workflowevent_on_behalf_of_id_66dbb5ad": "(on_behalf_of_id)",
    "approvals_workflowevent_tenant_id_08665c97": "(tenant_id)",
}
_FOREIGN_KEYS = {
    "approvals_workflowev_workflow_id_fa653bc6_fk_approvals": (
        "workflow_id",
        "approvals_workflow(id)",
    ),
    "approvals_workflowevent_actor_id_d86ebdd8_fk_approvals_user_id": (
        "actor_id",
        "approvals_user(id)",
    ),
    "approvals_workflowev_on_behalf_of_id_66dbb5ad_fk_approvals": (
        "on_behalf_of_id",
        "approvals_user(id)",
    ),
}


def _month_add(month: dt.date, n: int) -> dt.date:
    index = month.year * 12 + month.month - 1 + n
    return dt.date(index // 12, index % 12 + 1, 1)


def _partition_sql(month: dt.date) -> str:
    name = f"{EVENTS}_p{month:%Y%m}"
    return (
        f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF {EVENTS} '
        f"FOR VALUES FROM ('{month:%Y-%m-%d}') TO ('{_month_add(month, 1):%Y-%m-%d}')"
    )


def partition(apps, schema_editor):  # type: ignore[no-untyped-def]
    Event = apps.get_model("approvals", "WorkflowEvent")
    run = schema_editor.execute
    run(f"ALTER TABLE {EVENTS} RENAME TO {OLD}")
    run(f'ALTER TABLE {OLD} RENAME CONSTRAINT "{EVENTS}_pkey" TO "{EVENTS}_pkey_unpartitioned"')
    for name in _INDEXES:
        run(f'ALTER INDEX "{name}" RENAME TO "{name[:50]}_unpartitioned"')
    for name in _FOREIGN_KEYS:
        run(f'ALTER TABLE {OLD} DROP CONSTRAINT "{name}"')
    run(
        f"CREATE TABLE {EVENTS} (LIKE {OLD} INCLUDING DEFAULTS INCLUDING IDENTITY "
        f"INCLUDING CONSTRAINTS INCLUDING STORAGE, "
        f"CONSTRAINT {EVENTS}_pkey PRIMARY KEY (id, history_month)"
        f") PARTITION BY RANGE (history_month)"
    )
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT date_trunc('month', created_at AT TIME ZONE 'UTC')::date "
            "FROM approvals_workflow"
        )
        months = {row[0] for row in cursor.fetchall()}
    today = dt.datetime.now(dt.UTC).date().replace(day=1)
    months |= {_month_add(today, n) for n in range(-1, MONTHS_AHEAD + 1)}
    for month in sorted(months):
        run(_partition_sql(month))
    run(f'CREATE TABLE "{EVENTS}_default" PARTITION OF {EVENTS} DEFAULT')
    columns = [f.column for f in Event._meta.concrete_fields if f.column != "history_month"]
    listed = ", ".join(columns)
    run(
        f"INSERT INTO {EVENTS} ({listed}, history_month) OVERRIDING SYSTEM VALUE "
        f"SELECT {', '.join('e.' + c for c in columns)}, "
        f"date_trunc('month', w.created_at AT TIME ZONE 'UTC')::date "
        f"FROM {OLD} e JOIN approvals_workflow w ON w.id = e.workflow_id"
    )
    run(
        f"SELECT setval(pg_get_serial_sequence('{EVENTS}', 'id'), "
        f"GREATEST((SELECT max(id) FROM {EVENTS}), 1))"
    )
    run(f"DROP TABLE {OLD}")
    for name, columns_sql in _INDEXES.items():
        run(f'CREATE INDEX "{name}" ON {EVENTS} {columns_sql}')
    for name, (column, target) in _FOREIGN_KEYS.items():
        run(
            f'ALTER TABLE {EVENTS} ADD CONSTRAINT "{name}" FOREIGN KEY ({column}) '
            f"REFERENCES {target} DEFERRABLE INITIALLY DEFERRED"
        )
    run(
        f"CREATE TRIGGER {EVENTS}_append_only BEFORE UPDATE OR DELETE ON {EVENTS} "
        f"FOR EACH ROW EXECUTE FUNCTION approvals_refuse_event_change()"
    )
    run(
        f"CREATE TRIGGER {EVENTS}_no_truncate BEFORE TRUNCATE ON {EVENTS} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_event_change()"
    )


class Migration(migrations.Migration):
    dependencies = [("approvals", "0028_analytics")]

    operations = [
        # dropped on the plain table, added back with the partition key on the new one
        migrations.RemoveConstraint(model_name="workflowevent", name="event_seq"),
        migrations.RemoveConstraint(model_name="workflowevent", name="event_request_id"),
        migrations.AddField(
            model_name="workflowevent",
            name="history_month",
            field=models.DateField(default=dt.date(1970, 1, 1)),
            preserve_default=False,
        ),
        migrations.RunPython(partition, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="workflowevent",
            constraint=models.UniqueConstraint(
                fields=("workflow", "seq", "history_month"), name="event_seq"
            ),
        ),
        migrations.AddConstraint(
            model_name="workflowevent",
            constraint=models.UniqueConstraint(
                fields=("workflow", "request_id", "history_month"), name="event_request_id"
            ),
        ),
    ]
