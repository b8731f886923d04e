"""The sealed tenant's check (migration 0121) at a fraction of its cost.

Every row-level security policy asks ``(SELECT approvals_acting_tenant())`` once per
policed table and statement, a start or a decision some sixteen times. Each call went
through two SECURITY DEFINER functions with a ``SET search_path`` each (the setting saved
and restored per call), and the inner one, written in SQL, is never inlined (a SECURITY
DEFINER function is not), so its read of the key was parsed and planned again at every
call. Now both are PL/pgSQL (the key's read planned once per session) with no
``SET search_path``: every name in them is schema-qualified, operators included, so
nothing of the caller's takes part. The seal itself (its key, tenant, backend and
transaction start) is the same value as before.

The files are read from disk when the migration runs, and each is applied only while its
statements are the ones this migration knew (``SQL_FILES``), as migration 0046 explains."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"

# The files this migration applies, in this order, with their statements' digests.
SQL_FILES = {
    "functions/approvals_tenant_seal.sql": "99536d40f35f30d257e3aa85a53c24e2a3bb627e1d945211d7871ec474064433",
    "functions/approvals_acting_tenant.sql": "fea6f5191a4b89309af64c8d1e966e19df22c826ba986a0bafc0cc2092a649b1",
}


def statements_digest(text: str) -> str:
    """The SHA-256 of a file's text after its leading comment lines."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith("--"):
        start += 1
    return hashlib.sha256("".join(lines[start:]).encode()).hexdigest()


def forwards(apps: Any, schema_editor: Any) -> None:
    for name, digest in SQL_FILES.items():
        path = SQL_DIR / name
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        if statements_digest(text) == digest:
            schema_editor.execute(text, None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0135_workflow_template_roles")]
    # Backwards, the objects stay as they are (as migration 0046's).
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
