"""A row that belongs to a workflow has the workflow's tenant; the database checks it on
the workflow (see ``tenant_of_workflow``), so the copies lose their own constraint."""

import django.db.models.deletion
from django.db import migrations, models

from approvals.migration_ops import drop_tenant_constraint


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0015_fewer_indexes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_tenant_constraint(
                    "approvals_pendingtask", "approvals_pendingtask_tenant_id_e0869a58_fk_approvals_tenant_id"
                ),
                drop_tenant_constraint(
                    "approvals_timer", "approvals_timer_tenant_id_4f3db2cc_fk_approvals_tenant_id"
                ),
                drop_tenant_constraint(
                    "approvals_workflowevent", "approvals_workflowev_tenant_id_08665c97_fk_approvals"
                ),
                drop_tenant_constraint(
                    "approvals_workflowparticipant", "approvals_workflowpa_tenant_id_03ed2a34_fk_approvals"
                ),
            ],
            state_operations=[
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
            ],
        ),
    ]
