from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0023_workflow_summary'),
    ]

    operations = [
        # Who left and handed this task on: the inbox marks such a task (projected from
        # the TaskReassigned event of reason handed_on; rebuild_read_models derives it).
        migrations.AddField(
            model_name='pendingtask',
            name='handed_on_from',
            field=models.CharField(blank=True, db_default='', default='', max_length=150),
        ),
    ]
