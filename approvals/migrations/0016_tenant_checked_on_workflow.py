"""The tenant column of the rows every command writes keeps no database constraint (see
``approvals.models.workflows.shared_row``): checking one takes a share lock on the
tenant's row in every command's transaction."""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models


def drop_foreign_key(table: str, name: str, column: str, target: str) -> migrations.RunPython:
    """Drop the foreign-key constraint ``name`` of ``table.column`` (to ``target``'s id);
    backwards, add it again (this migration's own copy: a migration imports no helper of
    the app)."""
    drop = f'ALTER TABLE "{table}" DROP CONSTRAINT IF EXISTS "{name}"'
    add = (
        f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" FOREIGN KEY ("{column}")'
        f' REFERENCES "{target}" ("id") DEFERRABLE INITIALLY DEFERRED'
    )

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(drop)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(add)

    return migrations.RunPython(forwards, backwards)


class Migration(migrations.Migration):

    dependencies = [
        ('approvals', '0015_fewer_indexes'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_foreign_key(
                    "approvals_pendingtask", "approvals_pendingtask_tenant_id_e0869a58_fk_approvals_tenant_id", "tenant_id", "approvals_tenant"
                ),
                drop_foreign_key(
                    "approvals_timer", "approvals_timer_tenant_id_4f3db2cc_fk_approvals_tenant_id", "tenant_id", "approvals_tenant"
                ),
                drop_foreign_key(
                    "approvals_workflowevent", "approvals_workflowev_tenant_id_08665c97_fk_approvals", "tenant_id", "approvals_tenant"
                ),
                drop_foreign_key(
                    "approvals_workflowparticipant", "approvals_workflowpa_tenant_id_03ed2a34_fk_approvals", "tenant_id", "approvals_tenant"
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
