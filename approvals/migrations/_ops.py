"""Operations the migrations share (a name Django's migration loader skips)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """``sql`` forwards and ``reverse_sql`` backwards, each handed whole to the schema
    editor. For changes whose reason is a PostgreSQL cost (a lock, an index written on
    every insert) that Django's own operations do not express."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


def drop_foreign_key(table: str, name: str, column: str, target: str) -> migrations.RunPython:
    """Drop the foreign-key constraint ``name`` of ``table.column`` (to ``target``'s id)."""
    return postgres_sql(
        f'ALTER TABLE "{table}" DROP CONSTRAINT IF EXISTS "{name}"',
        f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" FOREIGN KEY ("{column}")'
        f' REFERENCES "{target}" ("id") DEFERRABLE INITIALLY DEFERRED',
    )


# Row-level security (migration 0035, approvals/runtime/tenant_scope.py). A table that a
# later migration adds with a tenant_id gets its policy from ``row_level_security_ensure``
# after every ``migrate`` (approvals/apps.py); tests/approvals/access/
# test_row_level_security.py fails for a table left without.
TENANT_ISOLATION = "tenant_id = NULLIF(current_setting('approvals.tenant', true), '')::bigint"


def tenant_isolation_sql(table: str, using: str = TENANT_ISOLATION) -> str:
    """Row-level security on ``table``: ``approvals_app`` sees and writes the rows of the
    tenant its transaction acts for (``using``), members of ``approvals_system`` all rows,
    and any other role (the tables' owner included: FORCE) none."""
    return (
        f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY;'
        f' ALTER TABLE "{table}" FORCE ROW LEVEL SECURITY;'
        f' DROP POLICY IF EXISTS tenant_isolation ON "{table}";'
        f' CREATE POLICY tenant_isolation ON "{table}" TO approvals_app'
        f" USING ({using}) WITH CHECK ({using});"
        f' DROP POLICY IF EXISTS cross_tenant ON "{table}";'
        f' CREATE POLICY cross_tenant ON "{table}" TO approvals_system USING (true) WITH CHECK (true);'
    )


def tenant_isolation_reverse_sql(table: str) -> str:
    return (
        f'DROP POLICY IF EXISTS tenant_isolation ON "{table}";'
        f' DROP POLICY IF EXISTS cross_tenant ON "{table}";'
        f' ALTER TABLE "{table}" NO FORCE ROW LEVEL SECURITY;'
        f' ALTER TABLE "{table}" DISABLE ROW LEVEL SECURITY;'
    )


# The tables with their own tenant_id: every one in the schema, the partitioned events'
# parent but none of its partitions.
TENANT_TABLES_SQL = """
SELECT c.relname FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
ORDER BY c.relname
"""

# Owned through a parent without a tenant_id of their own: (table, parent, the column
# naming the parent's id). The policy asks the parent, itself under its policy.
THROUGH_PARENT = (
    ("approvals_apitoken", "approvals_user", "user_id"),
    ("notifications_notificationpreference", "approvals_user", "user_id"),
    ("approvals_orggroup_members", "approvals_orggroup", "orggroup_id"),
)


# The app role's privileges: on every table and sequence, and on those created later.
RLS_GRANTS = """
GRANT USAGE ON SCHEMA public TO approvals_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO approvals_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO approvals_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public
    GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO approvals_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO approvals_app;
"""
# The search's functions (migration 0043): the app role may execute them, once they
# exist and it does.
SEARCH_FUNCTIONS = ("approvals_search_ids(tsquery)", "approvals_people_named(tsquery)")
SEARCH_FUNCTION_GRANTS = (
    "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'approvals_app') THEN\n"
    + "".join(
        f"    IF to_regprocedure('{fn}') IS NOT NULL THEN"
        f" GRANT EXECUTE ON FUNCTION {fn} TO approvals_app; END IF;\n"
        for fn in SEARCH_FUNCTIONS
    )
    + "END IF; END $$;\n"
)


def row_level_security_ensure(cursor: Any, *, applying: bool = False) -> list[str]:
    """Grant the app role its privileges, give every tenant-owned table that has none its
    policies, and take the app role's privileges off partitions (read through their parent's policy); returns the tables
    it changed. Does nothing where the roles do not exist (migration 0035's notice) or
    0035 is neither ``applying`` nor applied (migrated back: its reverse stays undone)."""
    cursor.execute(
        "SELECT (SELECT count(*) = 2 FROM pg_roles"
        "  WHERE rolname IN ('approvals_app', 'approvals_system'))"
        " AND (%s OR EXISTS (SELECT 1 FROM django_migrations"
        "  WHERE app = 'approvals' AND name = '0035_row_level_security'))",
        [applying],
    )
    if not cursor.fetchone()[0]:
        return []
    cursor.execute(RLS_GRANTS)
    cursor.execute(SEARCH_FUNCTION_GRANTS)
    cursor.execute(
        "SELECT c.relname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid"
        " WHERE p.polname = 'tenant_isolation' AND c.relforcerowsecurity"
    )
    done = {row[0] for row in cursor.fetchall()}
    cursor.execute(TENANT_TABLES_SQL)
    wanted = [(row[0], TENANT_ISOLATION) for row in cursor.fetchall()]
    cursor.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')"
    )
    present = {row[0] for row in cursor.fetchall()}
    wanted += [
        (table, f'EXISTS (SELECT 1 FROM "{parent}" p WHERE p.id = "{table}"."{column}")')
        for table, parent, column in THROUGH_PARENT
        if table in present and parent in present
    ]
    changed = []
    for table, using in wanted:
        if table not in done:
            cursor.execute(tenant_isolation_sql(table, using))
            changed.append(table)
    cursor.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relispartition AND c.relkind IN ('r', 'p')"
        " AND has_table_privilege('approvals_app', c.oid, 'SELECT')"
    )
    for (partition,) in cursor.fetchall():
        cursor.execute(f'REVOKE ALL ON "{partition}" FROM approvals_app')
    return changed
