"""``DailySeal``: one signed Merkle root per organisation per UTC day over every
workflow's chain head (approvals.audit.daily_seal), append-only like the chain seals:
on PostgreSQL a trigger refuses UPDATE, DELETE and TRUNCATE (TRUNCATE allowed only
where ``approvals.allow_truncate = on``, in throw-away test databases); on SQLite
triggers refuse UPDATE and DELETE."""

import django.db.models.deletion
from django.db import migrations, models

PG_CREATE = """
CREATE TRIGGER approvals_dailyseal_append_only
    BEFORE UPDATE OR DELETE ON approvals_dailyseal
    FOR EACH ROW EXECUTE FUNCTION approvals_refuse_seal_change();

CREATE TRIGGER approvals_dailyseal_no_truncate
    BEFORE TRUNCATE ON approvals_dailyseal
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_seal_change();
"""
PG_DROP = """
DROP TRIGGER IF EXISTS approvals_dailyseal_no_truncate ON approvals_dailyseal;
DROP TRIGGER IF EXISTS approvals_dailyseal_append_only ON approvals_dailyseal;
"""
SQLITE_CREATE = [
    f"""CREATE TRIGGER IF NOT EXISTS approvals_dailyseal_refuse_{op.lower()}
    BEFORE {op} ON approvals_dailyseal
    BEGIN SELECT RAISE(ABORT, 'daily seals are append-only ({op} refused)'); END;"""
    for op in ("UPDATE", "DELETE")
]
SQLITE_DROP = [
    f"DROP TRIGGER IF EXISTS approvals_dailyseal_refuse_{op.lower()};"
    for op in ("UPDATE", "DELETE")
]


# vendor -> (statements forwards, statements backwards)
STATEMENTS = {"postgresql": ([PG_CREATE], [PG_DROP]), "sqlite": (SQLITE_CREATE, SQLITE_DROP)}


def _run(direction):
    def run(apps, schema_editor):
        for statement in STATEMENTS.get(schema_editor.connection.vendor, ([], []))[direction]:
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("approvals", "0035_row_level_security")]

    operations = [
        migrations.CreateModel(
            name="DailySeal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("count", models.PositiveIntegerField()),
                ("root", models.CharField(max_length=64)),
                ("prev_signature", models.CharField(blank=True, default="", max_length=64)),
                ("sealed_at", models.DateTimeField()),
                ("key_id", models.CharField(max_length=16)),
                ("signature", models.CharField(max_length=64)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, to="approvals.tenant"
                    ),
                ),
            ],
            options={
                "ordering": ["tenant", "day"],
                "constraints": [
                    models.UniqueConstraint(fields=("tenant", "day"), name="dailyseal_tenant_day")
                ],
            },
        ),
        migrations.RunPython(_run(0), _run(1)),
    ]
