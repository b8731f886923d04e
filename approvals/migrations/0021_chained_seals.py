"""An audit chain that catches a database superuser.

- ``WorkflowEvent.hash_format``: NULL for the events hashed before (format 1), 2 for
  those the command path now writes, whose hash covers the tenant too. A nullable
  column without a default: PostgreSQL adds it without touching a row.
- ``ChainSeal.number`` and ``prev_signature``: each organisation's seals are a chain.
- ``SealedHead``: the head each workflow had at its last seal (what the next seal
  compares with).
- ``AuditOverride``: an operator's recorded decision to go ahead although verification
  failed, append-only like the seals (triggers refuse UPDATE, DELETE and TRUNCATE,
  TRUNCATE allowed only where ``approvals.allow_truncate = on``).
"""

import django.db.models.deletion
from django.db import migrations, models

PG_CREATE = """
CREATE OR REPLACE FUNCTION approvals_refuse_override_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'audit overrides are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER approvals_auditoverride_append_only
    BEFORE UPDATE OR DELETE ON approvals_auditoverride
    FOR EACH ROW EXECUTE FUNCTION approvals_refuse_override_change();

CREATE TRIGGER approvals_auditoverride_no_truncate
    BEFORE TRUNCATE ON approvals_auditoverride
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_override_change();
"""

PG_DROP = """
DROP TRIGGER IF EXISTS approvals_auditoverride_no_truncate ON approvals_auditoverride;
DROP TRIGGER IF EXISTS approvals_auditoverride_append_only ON approvals_auditoverride;
DROP FUNCTION IF EXISTS approvals_refuse_override_change();
"""

def forwards(apps, schema_editor):
    schema_editor.execute(PG_CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(PG_DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0020_outbound_hosts"),
    ]

    operations = [
        migrations.AddField(
            model_name="workflowevent",
            name="hash_format",
            field=models.SmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="chainseal",
            name="number",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="chainseal",
            name="prev_signature",
            field=models.CharField(blank=True, max_length=64, null=True),
        ),
        migrations.AddIndex(
            model_name="chainseal",
            index=models.Index(fields=["tenant", "number"], name="chainseal_tenant_number"),
        ),
        migrations.CreateModel(
            name="SealedHead",
            fields=[
                ("workflow_id", models.UUIDField(primary_key=True, serialize=False)),
                ("version", models.PositiveIntegerField()),
                ("last_hash", models.CharField(max_length=64)),
                (
                    "tenant",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        to="approvals.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="AuditOverride",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("at", models.DateTimeField()),
                ("action", models.CharField(max_length=64)),
                ("operator", models.CharField(max_length=150)),
                ("reason", models.TextField()),
                ("problems", models.JSONField()),
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
                "ordering": ["at", "id"],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]
