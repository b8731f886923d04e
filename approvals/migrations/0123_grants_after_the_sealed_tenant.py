"""The app role's grants again, as migration 0121 left them (the file's words changed,
not its grants), applied as migration 0046 applies its files: only while the file's
statements are the ones this migration knew, and only where the roles of migration 0035
exist. The policies of the tables added since 0046 are applied by 0126 with the file's
last version (and by ``row_level_security_ensure`` after every migrate)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")

SQL_FILES = {
    "policies/grants.sql": "2663dd337389ffe80e606e81a69e613dd1953e56c6393097ff28ee8b033d897d",
}


def statements_digest(text: str) -> str:
    """The SHA-256 of a file's text after its leading comment lines."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("--"):
        start += 1
    return hashlib.sha256("".join(lines[start:]).encode()).hexdigest()


def forwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s)", [list(ROLES)])
        roles = cursor.fetchone()[0]
    if roles != len(ROLES):
        sys.stderr.write(
            "Migration 0123: row-level security's policies not applied: the roles"
            " approvals_app and approvals_system do not exist (see migration 0035).\n"
        )
        return
    for name, digest in SQL_FILES.items():
        path = SQL_DIR / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if statements_digest(text) == digest:
            schema_editor.execute(text, None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0122_delegation_created_by")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
