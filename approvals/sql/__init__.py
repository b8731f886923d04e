"""The database objects the app relies on, as ``.sql`` files (README.md in this folder):
functions, triggers, and row-level security's policies and grants.

This module reads them for the live code and the tests. Migrations never import it:
each carries its own SQL, and the one that re-applies the files reads them from disk
itself. ``row_level_security_ensure`` runs after every ``migrate`` (approvals/apps.py):
it grants the app role its privileges and gives a table a later migration adds with a
``tenant_id`` its policies, so no table is ever left readable across tenants;
``tests/approvals/test_sql_files.py`` then fails until that table's policies are written
into ``policies/tenant_isolation.sql``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SQL_DIR = Path(__file__).resolve().parent

# Applied in this order; the policies (and grants) only where the roles exist.
FOLDERS = ("functions", "triggers", "policies")

APP_ROLE = "approvals_app"
SYSTEM_ROLE = "approvals_system"


def sql_files(folder: str) -> list[Path]:
    """The ``.sql`` files of ``folder`` (``functions``, ``triggers``, ``policies``), by name."""
    return sorted((SQL_DIR / folder).glob("*.sql"))


def sql_text(name: str) -> str:
    """The text of one file, ``name`` relative to this folder (``policies/grants.sql``)."""
    return (SQL_DIR / name).read_text(encoding="utf-8")


# -- row-level security for tables added later ----------------------------------------------

# The organisation a transaction acts for, once per statement: the setting
# approvals.tenant as approvals_act_for sealed it (functions/approvals_acting_tenant.sql),
# so approvals_app can neither set it by hand nor change it mid-statement.
ACTING_TENANT = "(SELECT approvals_acting_tenant())"

# The policy of a table with its own tenant_id (policies/tenant_isolation.sql holds every
# table's as written; tests/approvals/test_sql_files.py holds the two equal).
TENANT_ISOLATION = f"tenant_id = {ACTING_TENANT}"

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
    ("approvals_user_groups", "approvals_user", "user_id"),
    ("approvals_user_user_permissions", "approvals_user", "user_id"),
    ("django_admin_log", "approvals_user", "user_id"),
)

# Tenant-shaped by their own id: the organisations (each sees its own settings only).
BY_OWN_ID = (("approvals_tenant", f"id = {ACTING_TENANT}"),)


def tenant_isolation_sql(table: str, using: str = TENANT_ISOLATION) -> str:
    """Row-level security on ``table``: ``approvals_app`` sees and writes the rows of the
    tenant its transaction acts for (``using``), members of ``approvals_system`` all rows,
    and any other role (the tables' owner included: FORCE) none."""
    return (
        f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY;'
        f' ALTER TABLE "{table}" FORCE ROW LEVEL SECURITY;'
        f' DROP POLICY IF EXISTS tenant_isolation ON "{table}";'
        f' CREATE POLICY tenant_isolation ON "{table}" TO {APP_ROLE}'
        f" USING ({using}) WITH CHECK ({using});"
        f' DROP POLICY IF EXISTS cross_tenant ON "{table}";'
        f' CREATE POLICY cross_tenant ON "{table}" TO {SYSTEM_ROLE} USING (true) WITH CHECK (true);'
    )


def row_level_security_ensure(cursor: Any) -> list[str]:
    """Grant the app role its privileges (``policies/grants.sql``), give every
    tenant-owned table that has none its policies, and take the app role's privileges
    off partitions (read through their parent's policy); returns the tables it changed.
    Does nothing where the roles do not exist (migration 0035's notice) or migration
    0035 is not applied (migrated back: its reverse stays undone)."""
    cursor.execute(
        "SELECT (SELECT count(*) = 2 FROM pg_roles"
        "  WHERE rolname IN (%s, %s))"
        " AND EXISTS (SELECT 1 FROM django_migrations"
        "  WHERE app = 'approvals' AND name = '0035_row_level_security')",
        [APP_ROLE, SYSTEM_ROLE],
    )
    if not cursor.fetchone()[0]:
        return []
    cursor.execute(sql_text("policies/grants.sql"))
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
    wanted += [(table, using) for table, using in BY_OWN_ID if table in present]
    changed = []
    for table, using in wanted:
        if table not in done:
            cursor.execute(tenant_isolation_sql(table, using))
            changed.append(table)
    cursor.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relispartition AND c.relkind IN ('r', 'p')"
        f" AND has_table_privilege('{APP_ROLE}', c.oid, 'SELECT')"
    )
    for (partition,) in cursor.fetchall():
        cursor.execute(f'REVOKE ALL ON "{partition}" FROM {APP_ROLE}')
    return changed
