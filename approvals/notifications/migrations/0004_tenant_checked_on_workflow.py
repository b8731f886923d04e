"""A row that belongs to a workflow has the workflow's tenant; the database checks it on
the workflow (see ``tenant_of_workflow``), so the copies lose their own constraint."""

import django.db.models.deletion
from django.db import migrations, models

from approvals.migration_ops import drop_tenant_constraint


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0016_tenant_checked_on_workflow'),
        ('notifications', '0003_fewer_indexes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_tenant_constraint(
                    "notifications_mailmessage", "notifications_mailme_tenant_id_9c6c0117_fk_approvals"
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='mailmessage',
                    name='tenant',
                    field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='approvals.tenant'),
                ),
            ],
        ),
    ]
