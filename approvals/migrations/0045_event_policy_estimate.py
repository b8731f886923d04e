"""The events' policy names the organisation through a subquery, so the planner costs
it as "one organisation's share" instead of with the organisation's own statistics.

Why: under the organisation's policy (migration 0035) every read of the events is also
restricted by ``tenant_id = NULLIF(current_setting('approvals.tenant', true), '')::bigint``.
The planner evaluates ``current_setting`` (a stable function) to estimate that
condition, so it is estimated for the organisation acting, as a constant would be. An
organisation that had no events in the month's partition at its last ANALYZE is then
taken for empty (migration 0041 keeps every organisation with rows among the most
common values, so one that is not has none), the partition's index on ``tenant_id``
alone costs next to nothing, and it wins over the keys: the check for a repeated request
id (``commands._RECORDED_SQL``, by workflow and request id) walked all of the
organisation's events in the month (6,006 rows, 383 buffers a command in the scale
bench), and so could any other read of a workflow's events. An index that starts with
the tenant and goes on with the key (as migration 0044 added for the other tables) does
not win the tie here: the planner counts the tenant's correlation in the partition at
three quarters for an index of several columns, so the index on the tenant alone stays
cheaper, and replacing it on the largest table would cost a rebuild and a larger index.

``(SELECT NULLIF(...))`` is the same condition, evaluated once per statement (an
initplan), but its value is unknown when the statement is planned: the planner takes
the table's rows over its organisations (capped by the commonest), so a key
(``event_request_id``, ``event_seq``) is chosen for a read by workflow whatever the
statistics say of the organisation acting. The rows seen and written are the same; the
indexes are the same; nothing is rewritten. A read of all of one organisation's events
(the export, the archive's count) is planned for an average organisation, not for this
one. tests/approvals/access/test_new_organisation_plans.py explains the check for an
organisation grown since the statistics and fails if it walks again.

Only where migration 0035 gave the events their policy."""

from typing import Any

from django.db import migrations


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """``sql`` forwards and ``reverse_sql`` backwards, each handed whole to the schema
    editor (this migration's own copy: a migration imports no helper of the app)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


# The policy as migration 0035 wrote it (the way back).
TENANT_ISOLATION = "tenant_id = NULLIF(current_setting('approvals.tenant', true), '')::bigint"
EVENTS = "approvals_workflowevent"
UNESTIMATED = "tenant_id = (SELECT NULLIF(current_setting('approvals.tenant', true), '')::bigint)"


def _policy_sql(using: str) -> str:
    return (
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_policy"
        f" WHERE polrelid = '{EVENTS}'::regclass AND polname = 'tenant_isolation') THEN"
        f" ALTER POLICY tenant_isolation ON {EVENTS} USING ({using}) WITH CHECK ({using});"
        " END IF; END $$"
    )


class Migration(migrations.Migration):
    dependencies = [("approvals", "0044_workflow_lookups")]
    operations = [postgres_sql(_policy_sql(UNESTIMATED), _policy_sql(TENANT_ISOLATION))]
