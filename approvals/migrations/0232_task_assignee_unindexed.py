"""The open tasks' index on ``assignee_id`` alone is dropped: every task's insert wrote
it, and each read of a person's tasks names the tenant too (the inbox, a delegation's
check, a leaver's hand-over), which the inbox indexes (tenant, assignee, ...) serve.

Deleting a person (``on_delete=CASCADE`` and the foreign key's check) now reads the
open tasks without an index: the table holds open tasks only, not the history. And a
person new to the statistics no longer has an index on the person alone that looks
cheaper than the workflow's key (SCALE.md, the lookups by workflow and person)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0231_timer_one_key"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="pendingtask",
            name="assignee",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="tasks",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
    ]
