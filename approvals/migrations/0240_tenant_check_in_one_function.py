"""The sealed tenant's check (migrations 0121, 0140) in one function, the key read once
per session.

Every row-level security policy asks ``(SELECT approvals_acting_tenant())`` once per
policed table and statement: sixteen times a start, twenty a decision. Each call went
through a second SECURITY DEFINER PL/pgSQL function, ``approvals_tenant_seal``, which
read the key from ``approvals_tenant_key`` (a query through the executor) and hashed a
text of the key, tenant, backend and transaction start. Now:

- ``approvals_tenant_seal_key()`` reads the key; it is IMMUTABLE, so PostgreSQL evaluates
  it when it plans the seal's expression, and PL/pgSQL keeps that plan for the session;
  no role may execute it;
- ``approvals_acting_tenant()`` computes the seal itself, in one expression, with no
  other function of its kind called and no table read;
- the seal hashes the binary forms of the backend's pid and the transaction's start and
  the tenant's text between the key's bytes (no number formatted as text);
- ``approvals_act_for`` (once per command) has no ``SET search_path``, saved and restored
  at every call, but schema-qualified names, and sets the two settings in PL/pgSQL
  expressions rather than queries (``PERFORM``); migration 0121 keeps its own copy of
  the function as it ran it.

The seal is bound to the same things (the key, the tenant, the backend, the
transaction's start), and ``approvals_act_for`` writes it through
``approvals_tenant_seal`` as before. A seal lives as long as its transaction, so none
made before this migration is checked after it.

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
    "functions/approvals_tenant_seal_key.sql": "d439f1bab49219758ed09756f9ef8c09ed9792dce32674b865ab59d8de6242e7",
    "functions/approvals_tenant_seal.sql": "7a01c9e4be6d82194aa2dee2d94fbcabbf2ef616fd4e35f9920b358b3f70f3f6",
    "functions/approvals_acting_tenant.sql": "4f70d822afb188dd1899c4710aa8653386def576f536f71f626aa72a39109b5c",
    "functions/approvals_act_for.sql": "24057631ce9e0a2fbef4078d2a53decfcb28095f8018e4cc8e41e1da42ea8c35",
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
    dependencies = [("approvals", "0233_workflow_template_unindexed")]
    # Backwards, the objects stay as they are (as migration 0046's).
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
