"""Every organisation's share of each table it owns known to the planner: the column
``tenant_id`` sampled with statistics target 1000 (the default is 100), on every table
that has it, event partitions included (``runtime.partitions`` does the same for each
partition it creates).

Why: every statement of a member runs under row-level security (migration 0035), whose
policy ``tenant_id = current_setting(...)`` the planner estimates with the setting's
value. With the default target, only the organisations more common than average are
in the column's most common values; a smaller one (a new organisation, or one grown
since the last ANALYZE) was estimated at about one row, so a lookup by primary key under
its policy walked the tenant's index instead (``workflow_newest``, or an event
partition's ``tenant_id`` index): 300 to 1,000 rows read per command for an organisation
of 300 requests in a database of ten million events. With every organisation among the
most common values (up to 1,000 of them), the primary key and the unique keys win.

The tables are analyzed here so the plans change now, not at autovacuum's next pass (five
minutes at ten million events on this machine)."""

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


TENANT_STATISTICS = 1000

SQL = f"""
DO $$
DECLARE t regclass;
BEGIN
    FOR t IN
        SELECT c.oid::regclass FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        JOIN pg_attribute a ON a.attrelid = c.oid
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
          AND a.attname = 'tenant_id' AND NOT a.attisdropped
    LOOP
        EXECUTE 'ALTER TABLE ' || t || ' ALTER COLUMN tenant_id SET STATISTICS {TENANT_STATISTICS}';
        EXECUTE 'ANALYZE ' || t;
    END LOOP;
END $$;
"""

REVERSE_SQL = SQL.replace(f"SET STATISTICS {TENANT_STATISTICS}", "SET STATISTICS -1")


class Migration(migrations.Migration):
    dependencies = [("approvals", "0040_search_words")]
    operations = [postgres_sql(SQL, REVERSE_SQL)]
