"""The inbox counters of a command counted in the statement that writes its tasks.

A command's transaction (approvals/runtime/store.py, ``pipelined(count_inbox=True)``)
adds each assignee's change in open tasks to ``approvals_inboxversion`` in the one
statement that deletes, marks and inserts its tasks, and sets
``approvals.inbox_counted`` with its tenant. The task triggers of 0034 and 0037 gain a
WHEN that skips such a transaction, so it runs no PL/pgSQL and queues no deferred
event; every other writer of tasks (admin, rebuild, deactivation, archive, the
poller's groups, a TRUNCATE) is counted by the triggers as before. The trigger file is
applied while its statements are the ones this migration knew (as 0046 does)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from django.db import migrations

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
SQL_FILES = {
    "triggers/inbox_version.sql": "5aa568ab5832e4dfdd5d7b339820628fe6bb5a4b8b2e987b1343a3d102f771e2",
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
    dependencies = [("approvals", "0240_tenant_check_in_one_function")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop, elidable=False)]
