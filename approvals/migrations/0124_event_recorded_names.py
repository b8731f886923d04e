"""``WorkflowEvent.recorded``: what an event records of its actor and workflow as they
were when it was written (the actor's username and display name, the status after the
event, the template and the subject), covered by hash format 3. NULL for every event
written before it, which keeps verifying under format 1 or 2: adding a nullable column
rewrites no row."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0123_grants_after_the_sealed_tenant"),
    ]

    operations = [
        migrations.AddField(
            model_name="workflowevent",
            name="recorded",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
