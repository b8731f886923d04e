"""The exchange rates (0070), the held decisions (0090) and the workflow template drafts
(0126) sample their ``tenant_id`` as every other table does since migration 0041
(statistics target 1000), so each organisation's share is estimated from its own rows."""

from django.db import migrations

TABLES = ("approvals_exchangerate", "approvals_helddecision", "approvals_workflowtemplatedraft")


class Migration(migrations.Migration):
    dependencies = [("approvals", "0126_template_drafts")]
    operations = [
        migrations.RunSQL(
            [f"ALTER TABLE {t} ALTER COLUMN tenant_id SET STATISTICS 1000" for t in TABLES],
            [f"ALTER TABLE {t} ALTER COLUMN tenant_id SET STATISTICS -1" for t in TABLES],
        )
    ]
