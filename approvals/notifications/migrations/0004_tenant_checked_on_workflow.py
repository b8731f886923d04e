"""The tenant column of the rows every command writes keeps no database constraint (see
``approvals.models.workflows.shared_row``)."""

import django.db.models.deletion
from django.db import migrations, models

from approvals.migrations._ops import drop_foreign_key


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0016_tenant_checked_on_workflow'),
        ('notifications', '0003_fewer_indexes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_foreign_key(
                    "notifications_mailmessage", "notifications_mailme_tenant_id_9c6c0117_fk_approvals", "tenant_id", "approvals_tenant"
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
