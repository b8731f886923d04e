"""The tenant column of the rows every command writes keeps no database constraint (see
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
