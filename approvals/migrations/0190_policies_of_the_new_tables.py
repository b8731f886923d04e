"""The tables added since migration 0127 (the step visits' retractions, the archived
workflows' index, the departments) are tenant-owned: the row-level security policies of
approvals/sql/policies/tenant_isolation.sql are applied again, with the functions and
triggers files named below, while each file's statements are the ones this migration
knew (as 0046 does), where the roles of migration 0035 exist."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
ROLES = ("approvals_app", "approvals_system")
SQL_FILES = {
    "policies/tenant_isolation.sql": "18f777a72351acb5459c69394cc7450175c13ffcac37e0152d6a7605f626bfa5",
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
            "Migration 0190: row-level security's policies not applied: the roles"
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
    dependencies = [("approvals", "0180_departments")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)]
