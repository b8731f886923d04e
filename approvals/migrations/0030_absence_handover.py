"""Retention and archive (approvals.audit.archive), in the migration reserved for it
(its name is kept): each organisation's retention, legal holds (append-only, signed),
and the months written to the archive store."""

import django.db.models.deletion
from django.db import migrations, models

PG_APPEND_ONLY = """
CREATE OR REPLACE FUNCTION approvals_refuse_hold_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'legal holds are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER approvals_legalhold_append_only
    BEFORE UPDATE OR DELETE ON approvals_legalhold
    FOR EACH ROW EXECUTE FUNCTION approvals_refuse_hold_change();

CREATE TRIGGER approvals_legalhold_no_truncate
    BEFORE TRUNCATE ON approvals_legalhold
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_hold_change();
"""

PG_DROP = """
DROP TRIGGER IF EXISTS approvals_legalhold_no_truncate ON approvals_legalhold;
DROP TRIGGER IF EXISTS approvals_legalhold_append_only ON approvals_legalhold;
DROP FUNCTION IF EXISTS approvals_refuse_hold_change();
"""


def append_only(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(PG_APPEND_ONLY, None)


def drop_append_only(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(PG_DROP, None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0029_history_scale")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.CreateModel(
            name="RetentionPolicy",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("years", models.PositiveSmallIntegerField(default=7)),
                ("set_by", models.CharField(blank=True, default="", max_length=150)),
                ("set_at", models.DateTimeField()),
                (
                    "tenant",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="retention",
                        to="approvals.tenant",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="ArchivedMonth",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("month", models.DateField()),
                ("data_name", models.CharField(max_length=300)),
                ("manifest_name", models.CharField(max_length=300)),
                ("events", models.PositiveBigIntegerField()),
                ("workflows", models.PositiveIntegerField()),
                ("signature", models.CharField(max_length=64)),
                ("written_at", models.DateTimeField()),
                ("dropped_at", models.DateTimeField(blank=True, null=True)),
                (
                    "tenant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, to="approvals.tenant"
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "month"), name="archivedmonth_tenant_month"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="LegalHold",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("workflow_id", models.UUIDField(blank=True, null=True)),
                ("action", models.CharField(max_length=16)),
                ("by", models.CharField(max_length=150)),
                ("at", models.DateTimeField()),
                ("reason", models.TextField()),
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
                "ordering": ["at", "id"],
                "indexes": [
                    models.Index(fields=["tenant", "workflow_id", "at"], name="legalhold_target")
                ],
            },
        ),
        migrations.RunPython(append_only, drop_append_only),
    ]
