"""The database's functions, triggers and row-level security policies are the ones their
files in approvals/sql/ declare, no more and no fewer.

How: the catalogue's rendering of every object (``pg_get_functiondef``,
``pg_get_triggerdef``, ``pg_policies``) is read, the files are applied inside a
transaction that is rolled back, and the catalogue is read again. An object the files
touched is one they declare (its catalogue row was written again); its rendering
before and after must be the same, whitespace aside. An object no file touched is one
the database has and no file declares; an object that is new after the files is one a
file declares and the database lacks. Both sides are PostgreSQL's own rendering, so a
file may be written in any layout.

Only where the database has the roles of migration 0035 are the policies compared (as
migration 0046 applies them only there).

And every file is applied as it now reads by a migration: the newest migration that
names it in its ``SQL_FILES`` records the digest of its statements. A file edited
without such a migration is skipped by the older ones (they apply only what they knew),
so the test database keeps the old definition and the comparison above fails too."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import connection, transaction

from approvals.sql import APP_ROLE, FOLDERS, SQL_DIR, SYSTEM_ROLE, sql_files

pytestmark = pytest.mark.django_db

# (kind, name) -> (the catalogue row's xmin, its definition as PostgreSQL renders it)
Catalogue = dict[tuple[str, str], tuple[str, str]]

FUNCTIONS_SQL = """
SELECT p.oid::regprocedure::text, p.xmin::text,
    CASE WHEN p.prokind = 'a' THEN (
        SELECT format('AGGREGATE %s SFUNC = %s STYPE = %s INITCOND = %s',
                      p.oid::regprocedure, a.aggtransfn::regprocedure,
                      format_type(a.aggtranstype, NULL), a.agginitval)
        FROM pg_aggregate a WHERE a.aggfnoid = p.oid)
    ELSE pg_get_functiondef(p.oid) END
FROM pg_proc p
WHERE p.pronamespace = current_schema()::regnamespace
  AND NOT EXISTS (
      SELECT 1 FROM pg_depend d
      WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
"""

# A trigger on the partitioned events is cloned onto every partition: the parent's counts.
TRIGGERS_SQL = """
SELECT t.tgrelid::regclass::text || ' ' || t.tgname, t.xmin::text, pg_get_triggerdef(t.oid)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE NOT t.tgisinternal AND t.tgparentid = 0
  AND c.relnamespace = current_schema()::regnamespace
"""

POLICIES_SQL = """
SELECT p.tablename || ' ' || p.policyname, pol.xmin::text,
    format('%s %s TO %s USING (%s) WITH CHECK (%s)',
           p.permissive, p.cmd, p.roles, p.qual, p.with_check)
FROM pg_policies p
JOIN pg_class c ON c.relname = p.tablename AND c.relnamespace = current_schema()::regnamespace
JOIN pg_policy pol ON pol.polrelid = c.oid AND pol.polname = p.policyname
WHERE p.schemaname = current_schema()
"""

# Row-level security switched on (and forced) on a table: compared as it is, not as
# touched (any trigger or policy on a table writes its catalogue row too).
ROW_SECURITY_SQL = """
SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class
WHERE relnamespace = current_schema()::regnamespace AND (relrowsecurity OR relforcerowsecurity)
"""


def _roles_exist() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) = 2 FROM pg_roles WHERE rolname IN (%s, %s)", [APP_ROLE, SYSTEM_ROLE]
        )
        return bool(cursor.fetchone()[0])


def _folders() -> tuple[str, ...]:
    return FOLDERS if _roles_exist() else tuple(f for f in FOLDERS if f != "policies")


def catalogue(folders: tuple[str, ...]) -> Catalogue:
    queries = {"function": FUNCTIONS_SQL, "trigger": TRIGGERS_SQL, "policy": POLICIES_SQL}
    kinds = {"functions": "function", "triggers": "trigger", "policies": "policy"}
    found: Catalogue = {}
    with connection.cursor() as cursor:
        for folder in folders:
            kind = kinds[folder]
            cursor.execute(queries[kind])
            for name, xmin, definition in cursor.fetchall():
                found[(kind, name)] = (xmin, " ".join(definition.split()))
    return found


def row_security() -> set[tuple[str, bool, bool]]:
    with connection.cursor() as cursor:
        cursor.execute(ROW_SECURITY_SQL)
        return set(cursor.fetchall())


def applied(
    folders: tuple[str, ...], read: Callable[[Path], str] = lambda p: p.read_text()
) -> tuple[Catalogue, set[tuple[str, bool, bool]]]:
    """The catalogue after every file of ``folders`` is applied, read inside a
    transaction that is then rolled back. Each kind is read right after its own folder,
    so the grants of ``policies/`` (which write a function's row) mark no function as
    declared."""
    found: Catalogue = {}
    with transaction.atomic():
        with connection.cursor() as cursor:
            for folder in folders:
                for path in sql_files(folder):
                    cursor.execute(read(path))
                found.update(catalogue((folder,)))
        security = row_security()
        transaction.set_rollback(True)
    return found, security


def differences(
    before: Catalogue, after: Catalogue
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(in the database but in no file, in a file but not in the database, differing)."""
    declared = {k for k, (xmin, _) in after.items() if k not in before or before[k][0] != xmin}
    undeclared = sorted(set(before) - declared)
    missing = sorted(declared - set(before))
    drifted = sorted(k for k in declared & set(before) if before[k][1] != after[k][1])
    return undeclared, missing, drifted


def test_every_file_declares_what_the_database_has() -> None:
    folders = _folders()
    before, security = catalogue(folders), row_security()
    after, security_after = applied(folders)

    undeclared, missing, drifted = differences(before, after)

    assert len([k for k in before if k[0] == "function"]) >= 25, "the app's functions are read"
    assert undeclared == [], (
        f"{undeclared}: in the database, declared by no file of approvals/sql/ (write it"
        " into its file, and apply the file in a migration)"
    )
    assert missing == [], f"{missing}: declared by a file, missing from the database"
    assert drifted == [], "\n\n".join(
        f"{k}: the database has\n{before[k][1]}\nits file says\n{after[k][1]}" for k in drifted
    )
    assert security == security_after, "row-level security switched on differs from the files"


def test_a_changed_file_is_caught() -> None:
    """The comparison sees a change in a function's body, a trigger's event and a
    policy's condition, an object left out of the files and one only a file has."""
    folders = _folders()
    before = catalogue(folders)

    def changed(path: Path) -> str:
        text = path.read_text()
        if path.name == "approvals_refuse_hold_change.sql":
            return text.replace("legal holds are append-only", "legal holds are kept")
        if path.name == "directory_version.sql":
            return text.replace("OR TRUNCATE ON public.approvals_user", "ON public.approvals_user")
        if path.name == "approvals_wait_bucket.sql":
            return "SELECT 1"  # left out
        if path.name == "approvals_add_arrays.sql":
            return text + text.replace("approvals_add_arrays", "approvals_add_arrays_again")
        if path.name == "tenant_isolation.sql" and "policies" in folders:
            return text.replace("p.id = approvals_apitoken.user_id", "p.id = 0")
        return text

    after, _ = applied(folders, changed)
    undeclared, missing, drifted = differences(before, after)

    assert undeclared == [
        ("function", "approvals_wait_bucket(timestamp with time zone,timestamp with time zone)")
    ]
    assert missing == [("function", "approvals_add_arrays_again(integer[],integer[])")]
    expected = [
        ("function", "approvals_refuse_hold_change()"),
        ("trigger", "approvals_user approvals_user_directory_changed"),
    ]
    if "policies" in folders:
        expected.append(("policy", "approvals_apitoken tenant_isolation"))
    assert drifted == sorted(expected)


def statements_digest(text: str) -> str:
    """The SHA-256 of a file's text after its leading comment lines (the migrations'
    rule: a comment at the head of a file may change without a migration)."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("--"):
        start += 1
    return hashlib.sha256("".join(lines[start:]).encode()).hexdigest()


def applied_digests() -> dict[str, tuple[str, str]]:
    """file -> (the newest migration that applies it, the digest that one records)."""
    newest: dict[str, tuple[str, str]] = {}
    migrations = SQL_DIR.parent / "migrations"
    for path in sorted(migrations.glob("[0-9][0-9][0-9][0-9]_*.py")):
        module = importlib.import_module(f"approvals.migrations.{path.stem}")
        for name, digest in getattr(module, "SQL_FILES", {}).items():
            newest[name] = (path.stem, digest)
    return newest


def test_every_file_is_applied_as_it_reads_by_a_migration() -> None:
    newest = applied_digests()
    files = {
        f"{folder}/{path.name}": statements_digest(path.read_text(encoding="utf-8"))
        for folder in FOLDERS
        for path in sql_files(folder)
    }
    unapplied = sorted(set(files) - set(newest))
    assert unapplied == [], f"{unapplied}: no migration applies these files (SQL_FILES)"
    changed = sorted(name for name, digest in files.items() if newest[name][1] != digest)
    assert changed == [], (
        f"{changed}: changed since the migration that last applied them; add a migration"
        " that applies them again with their new digests (approvals/sql/README.md)"
    )
