"""``DailySeal``: one signed Merkle root per organisation per UTC day over every
workflow's chain head (approvals.audit.daily_seal), append-only like the chain seals:
a trigger refuses UPDATE, DELETE and TRUNCATE (TRUNCATE allowed only where
``approvals.allow_truncate = on``, in throw-away test databases)."""

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


def forwards(apps, schema_editor):
    schema_editor.execute(PG_CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(PG_DROP, params=None)


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
        migrations.RunPython(forwards, backwards),
    ]
