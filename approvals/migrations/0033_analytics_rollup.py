"""The analytics rollup (``StepDay``) and the statement-level triggers on the step
visits that keep it (``approvals.runtime.rollup``), counted from the visits already
there."""

from typing import Any

import django.db.models.deletion
from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models


def install(apps: Any, schema_editor: Any) -> None:
    from approvals.runtime import rollup

    for sql in rollup.INSTALL:
        schema_editor.execute(sql)
    schema_editor.execute(rollup.RECOUNT_ALL)


def uninstall(apps: Any, schema_editor: Any) -> None:
    from approvals.runtime import rollup

    for sql in rollup.UNINSTALL:
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0032_inbox_sort")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.CreateModel(
            name="StepDay",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("template_key", models.SlugField(db_index=False, max_length=64)),
                ("step", models.CharField(max_length=64)),
                ("kind", models.CharField(max_length=16)),
                ("day", models.DateField()),
                ("dims", models.JSONField(blank=True, default=dict)),
                ("visits", models.IntegerField(default=0)),
                ("waiting", models.IntegerField(default=0)),
                ("completed", models.IntegerField(default=0)),
                ("rejected", models.IntegerField(default=0)),
                ("sent_back", models.IntegerField(default=0)),
                ("breached", models.IntegerField(default=0)),
                ("escalated", models.IntegerField(default=0)),
                ("waits", ArrayField(base_field=models.IntegerField(), size=None)),
                ("firsts", ArrayField(base_field=models.IntegerField(), size=None)),
                (
                    "tenant",
                    models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        to="approvals.tenant",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["tenant", "day"], name="stepday_tenant_day"),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("tenant", "template_key", "step", "kind", "day", "dims"),
                        name="stepday_key",
                    )
                ],
            },
        ),
        migrations.RunPython(install, uninstall),
    ]
