"""The chain seal table, append-only like the events table: a trigger refuses UPDATE,
DELETE and TRUNCATE of seals (TRUNCATE allowed only where
``approvals.allow_truncate = on``, in throw-away test databases, as for events)."""

import django.db.models.deletion
from django.db import migrations, models

PG_CREATE = """
CREATE OR REPLACE FUNCTION approvals_refuse_seal_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'chain seals are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER approvals_chainseal_append_only
    BEFORE UPDATE OR DELETE ON approvals_chainseal
    FOR EACH ROW EXECUTE FUNCTION approvals_refuse_seal_change();

CREATE TRIGGER approvals_chainseal_no_truncate
    BEFORE TRUNCATE ON approvals_chainseal
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_seal_change();
"""

PG_DROP = """
DROP TRIGGER IF EXISTS approvals_chainseal_no_truncate ON approvals_chainseal;
DROP TRIGGER IF EXISTS approvals_chainseal_append_only ON approvals_chainseal;
DROP FUNCTION IF EXISTS approvals_refuse_seal_change();
"""

def forwards(apps, schema_editor):
    schema_editor.execute(PG_CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(PG_DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0005_participants"),
    ]

    operations = [
        migrations.CreateModel(
            name="ChainSeal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("sealed_at", models.DateTimeField()),
                ("count", models.PositiveIntegerField()),
                ("digest", models.CharField(max_length=64)),
                ("heads", models.JSONField()),
                ("key_id", models.CharField(max_length=16)),
                ("signature", models.CharField(max_length=64)),
                (
                    "tenant",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        to="approvals.tenant",
                    ),
                ),
            ],
            options={
                "ordering": ["sealed_at", "id"],
                "indexes": [
                    models.Index(
                        fields=["tenant", "sealed_at"], name="approvals_c_tenant__25b15e_idx"
                    )
                ],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
