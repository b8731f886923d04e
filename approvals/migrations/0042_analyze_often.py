"""The tables whose rows a command reads by key under an organisation's policy analyzed
after a fixed number of changes rather than a tenth of the table (autovacuum's default
``autovacuum_analyze_scale_factor`` 0.1).

Why: an organisation the statistics last saw with no rows (a new one) is estimated at
about one row until the next ANALYZE (migration 0041 keeps every organisation that has
rows among the most common values), and a lookup by key under its policy may walk its
rows in the meantime. At a tenth of the table, the next ANALYZE of 100 million workflows
waits for ten million changes, about a month of the specification's decisions; at
20,000 changes plus 0.2% it waits for hours. One ANALYZE samples 300,000 rows (target
1000), a second or two of one autovacuum worker.

The event partitions are left to the default: a month's partition is new and small when
its organisations start writing to it, and a tenth of it comes soon."""

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


TABLES = (
    "approvals_workflow",
    "approvals_workflowparticipant",
    "approvals_stepvisit",
    "approvals_pendingtask",
    "approvals_timer",
)
OPTIONS = "autovacuum_analyze_scale_factor = 0.002, autovacuum_analyze_threshold = 20000"

SQL = "".join(f"ALTER TABLE {table} SET ({OPTIONS});\n" for table in TABLES)
REVERSE_SQL = "".join(
    f"ALTER TABLE {table} RESET (autovacuum_analyze_scale_factor, autovacuum_analyze_threshold);\n"
    for table in TABLES
)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0041_tenant_statistics")]
    operations = [postgres_sql(SQL, REVERSE_SQL)]
