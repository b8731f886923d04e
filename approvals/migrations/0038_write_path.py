"""The command path's cost inside PostgreSQL (bench/write_path.py measures each part).

- The rollup's triggers count a statement's one step visit without the general
  statement's aggregates (``runtime.rollup``, the single-row path): most of what the
  rollup cost a start or a decision. The single-row path is one query of the trigger
  (its test and its call together), an UPDATE of the key row before any INSERT, and a
  closed visit one change of its row (the counts' differences, the wait's bucket moved)
  instead of a visit taken away and one added.
- Workflows are kept at fillfactor 80: a decision rewrites its workflow's row, and
  with room on the page that is a HOT update (no new entry in the workflow's eleven
  indexes, the full-text GIN among them, whose words PostgreSQL would otherwise compute
  again) unless the status changes. New pages only: the table is not rewritten here.
  A decision's UPDATE names the status and the data only when they change
  (``runtime.commands``).
"""

from typing import Any

from django.db import migrations

FILLFACTOR = "ALTER TABLE approvals_workflow SET (fillfactor = 80)"
FILLFACTOR_BACK = "ALTER TABLE approvals_workflow RESET (fillfactor)"


def forward(apps: Any, schema_editor: Any) -> None:
    from approvals.runtime import rollup

    for sql in rollup.TRIGGER_FUNCTIONS:
        schema_editor.execute(sql)
    schema_editor.execute(FILLFACTOR)


def backward(apps: Any, schema_editor: Any) -> None:
    # the functions stay (the general path is their ELSE); the table's default back
    schema_editor.execute(FILLFACTOR_BACK)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0037_list_speed")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.RunPython(forward, backward),
    ]
