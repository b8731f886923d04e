"""Indexes the command path wrote on every insert and no query needs: a foreign key's
own index where a composite or unique index already starts with that column, and the
LIKE index of ``template_key``. Only the indexes go (the foreign keys stay as they
are, so no table is scanned to check them again)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0014_workflow_subject_index'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_pendingtask_tenant_id_e0869a58"',
                    'CREATE INDEX "approvals_pendingtask_tenant_id_e0869a58" ON "approvals_pendingtask" (tenant_id)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_pendingtask_workflow_id_46b64781"',
                    'CREATE INDEX "approvals_pendingtask_workflow_id_46b64781" ON "approvals_pendingtask" (workflow_id)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_timer_workflow_id_7f2b90e3"',
                    'CREATE INDEX "approvals_timer_workflow_id_7f2b90e3" ON "approvals_timer" (workflow_id)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_workflow_template_key_5b145eea"',
                    'CREATE INDEX "approvals_workflow_template_key_5b145eea" ON "approvals_workflow" (template_key)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_workflow_template_key_5b145eea_like"',
                    'CREATE INDEX "approvals_workflow_template_key_5b145eea_like" ON "approvals_workflow" (template_key varchar_pattern_ops)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_workflow_tenant_id_3c1c4d3e"',
                    'CREATE INDEX "approvals_workflow_tenant_id_3c1c4d3e" ON "approvals_workflow" (tenant_id)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_workflowevent_workflow_id_fa653bc6"',
                    'CREATE INDEX "approvals_workflowevent_workflow_id_fa653bc6" ON "approvals_workflowevent" (workflow_id)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_workflowparticipant_tenant_id_03ed2a34"',
                    'CREATE INDEX "approvals_workflowparticipant_tenant_id_03ed2a34" ON "approvals_workflowparticipant" (tenant_id)',
                ),
                migrations.RunSQL(
                    'DROP INDEX IF EXISTS "approvals_workflowparticipant_workflow_id_a29130a9"',
                    'CREATE INDEX "approvals_workflowparticipant_workflow_id_a29130a9" ON "approvals_workflowparticipant" (workflow_id)',
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='pendingtask',
                    name='tenant',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, to='approvals.tenant'),
                ),
                migrations.AlterField(
                    model_name='pendingtask',
                    name='workflow',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='tasks', to='approvals.workflow'),
                ),
                migrations.AlterField(
                    model_name='timer',
                    name='workflow',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='timers', to='approvals.workflow'),
                ),
                migrations.AlterField(
                    model_name='workflow',
                    name='template_key',
                    field=models.SlugField(db_index=False, max_length=64),
                ),
                migrations.AlterField(
                    model_name='workflow',
                    name='tenant',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='workflows', to='approvals.tenant'),
                ),
                migrations.AlterField(
                    model_name='workflowevent',
                    name='workflow',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='events', to='approvals.workflow'),
                ),
                migrations.AlterField(
                    model_name='workflowparticipant',
                    name='tenant',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, to='approvals.tenant'),
                ),
                migrations.AlterField(
                    model_name='workflowparticipant',
                    name='workflow',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='participants', to='approvals.workflow'),
                ),
            ],
        ),
    ]
