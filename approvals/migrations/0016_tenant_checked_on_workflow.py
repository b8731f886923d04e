"""A row that belongs to a workflow has the workflow's tenant; the database checks it on
the workflow (see ``tenant_of_workflow``), so the copies lose their own constraint."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0015_fewer_indexes'),
    ]

    operations = [
        migrations.AlterField(
            model_name='pendingtask',
            name='tenant',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, to='approvals.tenant'),
        ),
        migrations.AlterField(
            model_name='timer',
            name='tenant',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, to='approvals.tenant'),
        ),
        migrations.AlterField(
            model_name='workflowevent',
            name='tenant',
            field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, to='approvals.tenant'),
        ),
        migrations.AlterField(
            model_name='workflowparticipant',
            name='tenant',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, to='approvals.tenant'),
        ),
    ]
