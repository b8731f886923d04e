"""Operations the migrations share (a name Django's migration loader skips)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """SQL that runs on PostgreSQL only. For changes whose reason is a PostgreSQL cost
    (a lock, an index written on every insert): SQLite keeps its schema as it is, and
    is not made to rebuild a table (which would drop the table's triggers)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


def drop_foreign_key(table: str, name: str, column: str, target: str) -> migrations.RunPython:
    """Drop the foreign-key constraint ``name`` of ``table.column`` (to ``target``'s id)."""
    return postgres_sql(
        f'ALTER TABLE "{table}" DROP CONSTRAINT IF EXISTS "{name}"',
        f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" FOREIGN KEY ("{column}")'
        f' REFERENCES "{target}" ("id") DEFERRABLE INITIALLY DEFERRED',
    )


# Row-level security (migration 0035, approvals/runtime/tenant_scope.py). A migration
# that adds a table with a tenant_id runs ``tenant_isolation_sql(table)`` for it too;
# tests/approvals/access/test_row_level_security.py fails for a table left without.
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
