"""Row-level security on everything tenant-shaped, and a tenant setting the app role
cannot change.

Until here ``approvals.tenant`` was a plain setting: ``approvals_app`` could set it
again within its transaction and read another organisation's rows, and the tables
without a ``tenant_id`` (sessions, the admin log, the sign-in attempts, the person's
groups and permissions, the organisations themselves) were readable whatever it acted
for. Now:

- ``approvals_act_for(tenant)`` sets the tenant with a seal (a keyed SHA-256 of the
  tenant, the backend and the transaction's start; the key is in
  ``approvals_tenant_key``, which the app role may not read), and refuses under
  ``approvals_app``; every policy asks ``(SELECT approvals_acting_tenant())``, which
  refuses a tenant without its seal, once per statement;
- the person's groups, permissions and admin log follow the person's policy; the
  organisations' table shows the organisation acting only;
- sessions, sign-in attempts and the key are taken off the app role.

The files are read from disk when the migration runs, and each is applied only while
its statements are the ones this migration knew (``SQL_FILES``), as migration 0046
explains; for the two functions of the seal, which the policies need, the migration
keeps its own copy of those statements (``RAN``) and applies it once their files have
changed. The policies and grants are applied only where the roles of 0035 exist."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")

KEY_SQL = """
CREATE TABLE IF NOT EXISTS approvals_tenant_key (
    id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    key text NOT NULL
);
INSERT INTO approvals_tenant_key (id, key)
    SELECT 1, replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
    ON CONFLICT (id) DO NOTHING;
"""

# The files this migration applies, in this order, with their statements' digests.
SQL_FILES = {
    "functions/approvals_tenant_seal.sql": "ff4b56b0e1dfdaf56d993edaaffdeb18a184d67beb703f2b2ab66a11d3704123",
    "functions/approvals_act_for.sql": "0b7e6709968d7d6eba263432ab571b078c131004a85d48465109c7f972b8880c",
    "functions/approvals_acting_tenant.sql": "5bfa939850a990e085f97a04aadc9a4c20a7ddefc5eafeb7e6d8138d6acd7442",
    "functions/approvals_people_named.sql": "7bd6b4a49f5900b2a475ff63302c6cb623eaee9fe25f907d7a09fb83472dbc7a",
    "functions/approvals_search_ids.sql": "603a1cb63bcf3c5187df7a6669b49d869127584d0e3deaba599f6c0d4895ab92",
    "policies/tenant_isolation.sql": "1329c3f4209d03e00be2bf3cc4b0af7715442a8321d39e2841e7ecb657e0c44c",
    "policies/grants.sql": "03ba405cd5c9790f17a236f5aaeaebeaff3dcf4e1529da208f630702c94028a4",
}


# The functions of the seal as this migration ran them: their files have changed since
# (migrations 0140 and 0240), and the policies below call the first two, so where a
# file's statements are no longer these, this copy is applied instead (0140 or 0240 then
# applies the file).
RAN = {
    "functions/approvals_tenant_seal.sql": """CREATE OR REPLACE FUNCTION public.approvals_tenant_seal(tenant text)
 RETURNS text
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
    SELECT encode(sha256(convert_to(k.key || ':' || tenant || ':' || pg_backend_pid()::text
        || ':' || extract(epoch FROM transaction_timestamp())::text || ':' || k.key, 'UTF8')), 'hex')
    FROM public.approvals_tenant_key k
$function$;
REVOKE ALL ON FUNCTION public.approvals_tenant_seal(text) FROM PUBLIC;
""",
    "functions/approvals_acting_tenant.sql": """CREATE OR REPLACE FUNCTION public.approvals_acting_tenant()
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    tenant text := NULLIF(current_setting('approvals.tenant', true), '');
BEGIN
    IF tenant IS NULL THEN
        RETURN NULL;
    END IF;
    IF current_setting('approvals.tenant_seal', true) IS DISTINCT FROM public.approvals_tenant_seal(tenant) THEN
        RAISE EXCEPTION 'approvals.tenant was set to % without approvals_act_for in this transaction: refused', tenant
            USING ERRCODE = '42501';
    END IF;
    RETURN tenant::bigint;
END $function$;
""",
    "functions/approvals_act_for.sql": """CREATE OR REPLACE FUNCTION public.approvals_act_for(tenant bigint)
 RETURNS text
 LANGUAGE plpgsql
 VOLATILE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    IF current_setting('role') = 'approvals_app' THEN
        RAISE EXCEPTION 'approvals_app cannot change the organisation its transaction acts for (asked for %)', tenant
            USING ERRCODE = '42501';
    END IF;
    PERFORM set_config('approvals.tenant', coalesce(tenant::text, ''), true);
    PERFORM set_config('approvals.tenant_seal', coalesce(public.approvals_tenant_seal(tenant::text), ''), true);
    RETURN tenant::text;
END $function$;
""",
}


def statements_digest(text: str) -> str:
    """The SHA-256 of a file's text after its leading comment lines."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("--"):
        start += 1
    return hashlib.sha256("".join(lines[start:]).encode()).hexdigest()


def _apply(schema_editor: Any, folder: str) -> None:
    for name, digest in SQL_FILES.items():
        path = SQL_DIR / name
        if not name.startswith(folder + "/") or not path.exists():
            continue
        for text in (path.read_text(encoding="utf-8"), RAN.get(name, "")):
            if statements_digest(text) == digest:
                schema_editor.execute(text, None)
                break


def forwards(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute(KEY_SQL, None)
    _apply(schema_editor, "functions")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s)", [list(ROLES)])
        roles = cursor.fetchone()[0]
    if roles != len(ROLES):
        sys.stderr.write(
            "Migration 0121: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
        return
    _apply(schema_editor, "policies")


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0120_keys_with_tenant"),
        ("axes", "0010_accessattemptexpiration"),
        ("sessions", "0001_initial"),
        ("admin", "0003_logentry_add_action_flag_choices"),
    ]
    # Backwards, the objects stay as they are (as migration 0046's).
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
