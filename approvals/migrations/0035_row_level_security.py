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
later ``migrate`` (``_ops.row_level_security_ensure``, from approvals/apps.py), so a
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

from ._ops import row_level_security_ensure, tenant_isolation_reverse_sql

APP_ROLE = "approvals_app"
SYSTEM_ROLE = "approvals_system"

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
