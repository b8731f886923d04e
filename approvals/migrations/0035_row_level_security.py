"""Row-level security on every tenant-owned table.

Two roles, without login, shared by every database of the cluster:
- ``approvals_app``: NOSUPERUSER NOBYPASSRLS, with the table and sequence privileges the
  application needs (and the same on tables later migrations create). A transaction
  that acts for a tenant (approvals/runtime/tenant_scope.py) switches to it with
  ``SET LOCAL ROLE`` and sets ``approvals.tenant``; the policy ``tenant_isolation``
  then shows and accepts that tenant's rows only, and none when no tenant is set.
- ``approvals_system``: the cross-tenant role. Its members see every row through the
  policy ``cross_tenant``. A policy rather than the BYPASSRLS attribute: an attribute
  is not inherited through membership (the login role would have to SET ROLE to it
  for every cross-tenant statement), only a superuser may grant it, and it would reach
  every table of the database, not just ours.
FORCE ROW LEVEL SECURITY holds the tables' owner to the policies too: a role that is in
neither (the owner included) sees nothing, so the cross-tenant role is a named grant
rather than whoever ran the migrations. The migrating role is made a member of both,
as the web login role is in production (docs/operations.md, "Row-level security").

Tables with their own ``tenant_id`` are found in the catalogue, here and after every
later ``migrate`` (``approvals.sql.row_level_security_ensure``, from approvals/apps.py), so a
table a later migration adds is covered too (the events' policy sits
on the partitioned parent, which is the only way the application reads them; the
partitions themselves are not granted to approvals_app, so no one reaches them round
the parent's policy). Three tables owned through a parent without a tenant_id are
covered through it (``EXISTS`` on the parent, itself under its policy): API tokens and
notification preferences through their person, group memberships through the group.
Left without, and why: the counters ``inboxversion`` (a number per person, bumped by a
commit trigger) and ``directoryversion`` (one row per deployment); Django's and
guardian's permission tables (keyed by content type and object id, no tenant of their
own; the rules in approvals/access.py read them by person); sessions and sign-in
attempts (read before a request knows its tenant).

A role that may not create roles (neither superuser nor CREATEROLE) and finds them
missing skips all of this with a notice; docs/operations.md gives the SQL a DBA runs, after
which the next ``migrate`` grants and applies the policies (``row_level_security_ensure``
runs after every one).
"""

from __future__ import annotations

import sys
from typing import Any

from django.db import migrations

APP_ROLE = "approvals_app"
SYSTEM_ROLE = "approvals_system"

# What this migration applies, as it applied it (its own copy: a migration imports no
# helper of the app). The live code's version, run after every ``migrate`` for the
# tables added later, is approvals/sql/__init__.py.
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


# Concurrent migrations of two databases of one cluster (two test runs) may both find
# a role missing: the second CREATE fails as a duplicate, which is the state wanted.
CREATE_ROLES = f"""
DO $$ BEGIN
    CREATE ROLE {APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
DO $$ BEGIN
    CREATE ROLE {SYSTEM_ROLE} NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
"""

REVOKES = f"""
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM {APP_ROLE};
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON SEQUENCES FROM {APP_ROLE};
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {APP_ROLE};
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {APP_ROLE};
REVOKE USAGE ON SCHEMA public FROM {APP_ROLE};
"""

SKIPPED = (
    "Migration 0035: row-level security NOT enabled: the roles approvals_app and "
    "approvals_system do not exist and this role may not create them. Have a DBA run "
    "the SQL in docs/operations.md ('Row-level security'), then run this migration "
    "again; until then set APPROVALS_ROW_LEVEL_SECURITY=false.\n"
)


def _one(cursor: Any, sql: str, params: list[Any] | None = None) -> Any:
    cursor.execute(sql, params or [])
    return cursor.fetchone()[0]


def _roles_exist(cursor: Any) -> bool:
    return bool(
        _one(
            cursor,
            "SELECT count(*) = 2 FROM pg_roles WHERE rolname IN (%s, %s)",
            [APP_ROLE, SYSTEM_ROLE],
        )
    )


def forwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        may_create = _one(
            cursor,
            "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user",
        )
        if may_create:
            cursor.execute(CREATE_ROLES)
        if not _roles_exist(cursor):
            sys.stderr.write(SKIPPED)
            return
        if may_create:
            # The migrating role acts for tenants (SET ROLE approvals_app) and crosses
            # them (approvals_system): the web login role in production does the same.
            for role in (APP_ROLE, SYSTEM_ROLE):
                if not _one(cursor, "SELECT pg_has_role(current_user, %s, 'MEMBER')", [role]):
                    cursor.execute(f"GRANT {role} TO CURRENT_USER")
        row_level_security_ensure(cursor, applying=True)


def backwards(apps: Any, schema_editor: Any) -> None:
    """Policies off and grants revoked. The roles stay: they belong to the cluster, and
    other databases on it may use them."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid"
            " WHERE p.polname = 'tenant_isolation'"
        )
        for (table,) in cursor.fetchall():
            cursor.execute(tenant_isolation_reverse_sql(table))
        if _roles_exist(cursor):
            cursor.execute(REVOKES)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0034_inbox_version")]
    operations = [migrations.RunPython(forwards, backwards)]
