"""The mails' index on ``tenant_id`` alone is dropped: every mail's insert wrote it, no
read asks for an organisation's mails by the tenant alone (the sender and the digest
read the due rows, a command its workflow's), and nothing deletes an organisation. An
index led by the tenant would also look free to the planner for an organisation new
since the last ANALYZE (approvals migration 0044)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("notifications", "0007_held_not_recorded_mail")]

    operations = [
        migrations.AlterField(
            model_name="mailmessage",
            name="tenant",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="approvals.tenant",
            ),
        ),
    ]
