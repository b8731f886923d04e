"""Each archived workflow's first and last event id in the live index
(``ArchivedWorkflow``), so the audit API's pages, which follow the event id, find the
archived events that fall on a page without reading the whole archive. Null for a row
indexed before: ``manage.py index_archived`` writes them (the API says so until then)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("approvals", "0191_new_installation_statistics")]
    operations = [
        migrations.AddField(
            model_name="archivedworkflow",
            name="first_event_id",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="archivedworkflow",
            name="last_event_id",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="archivedworkflow",
            index=models.Index(
                fields=["tenant", "first_event_id"], name="archivedworkflow_first_id"
            ),
        ),
    ]
