"""The database's functions, triggers and row-level security applied from their files in
approvals/sql/, the one place to read them (approvals/sql/README.md).

Until here each object was written into the migration that created or changed it; those
migrations keep their own text (they are history). This one re-applies the current
files: every function with CREATE OR REPLACE, every trigger and policy dropped if it
exists and created again, so on a database migrated so far it changes nothing, and
running it twice changes nothing either. The policies and grants are applied only where
the roles of migration 0035 exist (where they do not, 0035 skipped them with a notice).

The files are read from disk, relative to this file, when the migration runs: it needs
nothing of the app. A later change to an object edits its file and adds a migration
that applies that file again the same way.

Triggers and policies are dropped and created inside this migration's transaction: each
table is locked for that moment (no rewrite, no scan)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")


def _files(folder: str) -> list[Path]:
    found = sorted((SQL_DIR / folder).glob("*.sql"))
    assert found, f"no .sql files in {SQL_DIR / folder}"
    return found


def forwards(apps: Any, schema_editor: Any) -> None:
    for folder in ("functions", "triggers"):
        for path in _files(folder):
            schema_editor.execute(path.read_text(encoding="utf-8"), None)
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s)", [list(ROLES)])
        roles = cursor.fetchone()[0]
    if roles != len(ROLES):
        sys.stderr.write(
            "Migration 0046: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
        return
    for path in _files("policies"):
        schema_editor.execute(path.read_text(encoding="utf-8"), None)
    # The events' partitions are read through their parent's policy only (as after every
    # migrate): the grant on all tables above reached them too.
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema() AND c.relispartition"
            " AND c.relkind IN ('r', 'p')"
            " AND has_table_privilege('approvals_app', c.oid, 'SELECT')"
        )
        partitions = [row[0] for row in cursor.fetchall()]
    for partition in partitions:
        schema_editor.execute(f'REVOKE ALL ON "{partition}" FROM approvals_app', None)


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0045_event_policy_estimate"),
        ("notifications", "0005_comment_mails"),
    ]
    # Backwards, the objects stay as they are: the migrations that created them drop them.
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
