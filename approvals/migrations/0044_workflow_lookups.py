"""The command path's lookups of one workflow (its row, its step visit, its pending tasks,
its timers) take the workflow's key as an index condition, whatever the planner believes
of the organisation's size.

Why: under the organisation's policy (migration 0035) every statement also says
``tenant_id = <the organisation>``. An organisation that had no rows at the last ANALYZE
(a new one) is estimated at no rows at all: migration 0041 puts every organisation that
has rows among the most common values, so one that is not is taken for empty. An index
that starts with the tenant then looks nearly free (no row to fetch, and rows of one
tenant close together), cheaper than the primary key or an index led by the workflow,
whose rows are anywhere in the table. So until the next ANALYZE (migration 0042) every
command of a new organisation read all of its rows:

- the lock (``commands._LOCK_SQL``) and the workflow's update walked its workflows in
  ``workflow_newest``, keeping the one by a filter on the id;
- closing a step visit (an UPDATE by id) walked its visits in ``visit_tenant_period``;
- ``DELETE FROM approvals_pendingtask WHERE workflow_id = ...`` and the lock's question
  whether the actor stands in for an assignee walked its tasks in an inbox index
  (tenant, assignee, ...);
- a timer's update or delete walked the index on the timers' ``tenant_id`` alone.

The indexes here start with the tenant and go on with the key: the planner's belief
about the tenant costs them exactly as the other indexes that start with it, and the key
is an index condition (one row read). Between indexes of equal cost PostgreSQL takes the
one created last (``get_relation_info`` lists a table's indexes newest first), which
these are; an index that starts with the tenant created on these tables later (by a
migration, or ``REINDEX CONCURRENTLY``, which builds a new index) would win the tie
instead. tests/approvals/access/test_new_organisation_plans.py explains the statements
for an organisation grown since the statistics and fails if one walks again.

- ``workflow_tenant_id`` (tenant, id) on the workflows and ``visit_tenant_id`` (tenant, id)
  on the step visits: one more index each, written when a workflow starts or a visit
  begins (a decision's update of the workflow is HOT and writes none).
- ``task_workflow`` (tenant, workflow, assignee) on the pending tasks: one more index.
  The unique key ``task_unique`` (workflow, step, assignee) stays for the reads that
  cross organisations (the superuser's admin, a rebuild), which name no tenant.
- ``timer_tenant_key`` (tenant, workflow, key) on the timers, in place of the index on
  ``tenant_id`` alone: it serves an organisation's timers as that one did. A timer's
  insert writes as many indexes as before.

Plain CREATE INDEX, as the project's other migrations: each table is locked against
writes while its index is built (seconds at millions of rows)."""

from typing import Any

from django.db import migrations, models


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """``sql`` forwards and ``reverse_sql`` backwards, each handed whole to the schema
    editor (this migration's own copy: a migration imports no helper of the app)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


TIMER_TENANT_INDEX = "approvals_timer_tenant_id_4f3db2cc"


class Migration(migrations.Migration):
    dependencies = [("approvals", "0043_search_under_policy")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.AddIndex(
            model_name="workflow",
            index=models.Index(fields=["tenant", "id"], name="workflow_tenant_id"),
        ),
        migrations.AddIndex(
            model_name="stepvisit",
            index=models.Index(fields=["tenant", "id"], name="visit_tenant_id"),
        ),
        migrations.AddIndex(
            model_name="pendingtask",
            index=models.Index(fields=["tenant", "workflow", "assignee"], name="task_workflow"),
        ),
        migrations.AddIndex(
            model_name="timer",
            index=models.Index(fields=["tenant", "workflow", "key"], name="timer_tenant_key"),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="timer",
                    name="tenant",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=models.deletion.CASCADE,
                        to="approvals.tenant",
                    ),
                )
            ],
            database_operations=[
                postgres_sql(
                    f"DROP INDEX IF EXISTS {TIMER_TENANT_INDEX}",
                    f"CREATE INDEX IF NOT EXISTS {TIMER_TENANT_INDEX}"
                    " ON approvals_timer (tenant_id)",
                )
            ],
        ),
    ]
