"""The live window (approvals.audit.retention): how many months after it finishes a
workflow's history stays in the live database, per organisation (null: the deployment's
``APPROVALS_LIVE_MONTHS``); and each archived organisation-month's last finish, where
its retention and its objects' lock are counted from. Columns of tables that already
carry row-level security (approvals/sql/policies/tenant_isolation.sql)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0150_rollup_folded_in_batches")]
    operations = [
        migrations.AddField(
            model_name="retentionpolicy",
            name="live_months",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="archivedmonth",
            name="last_finished_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
