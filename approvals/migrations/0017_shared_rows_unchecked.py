"""A workflow's tenant and template keep no database constraint (see
``approvals.models.workflows.shared_row``)."""

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
        ('approvals', '0016_tenant_checked_on_workflow'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                drop_foreign_key(
                    "approvals_workflow",
                    "approvals_workflow_tenant_id_3c1c4d3e_fk_approvals_tenant_id",
                    "tenant_id",
                    "approvals_tenant",
                ),
                drop_foreign_key(
                    "approvals_workflow",
                    "approvals_workflow_template_id_cbeb245a_fk_approvals",
                    "template_id",
                    "approvals_workflowtemplate",
                ),
            ],
            state_operations=[
                migrations.AlterField(
                    model_name='workflow',
                    name='template',
                    field=models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.PROTECT, to='approvals.workflowtemplate'),
                ),
                migrations.AlterField(
                    model_name='workflow',
                    name='tenant',
                    field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.PROTECT, related_name='workflows', to='approvals.tenant'),
                ),
            ],
        ),
    ]
