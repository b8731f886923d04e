"""On SQLite, as on PostgreSQL, the database refuses an UPDATE or DELETE of an event (and
of a chain seal). Run in a subprocess on an SQLite file of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
from django.db import connection, transaction, DatabaseError
from approvals.models import User, WorkflowEvent
from approvals.services.workflows import workflow_start

alice = User.objects.get(username="alice")
workflow_start(submitter=alice, template_key="expense-approval", subject_type="expense",
               subject_id="E-1", data={"amountPaise": 4500000, "currency": "INR",
                                       "department": "eng"})
event = WorkflowEvent.objects.order_by("id").first()
for sql in ("UPDATE approvals_workflowevent SET type = 'Forged' WHERE id = %s",
            "DELETE FROM approvals_workflowevent WHERE id = %s",
            "DELETE FROM approvals_workflowevent"):
    try:
        with transaction.atomic(), connection.cursor() as c:
            c.execute(sql, [event.pk] if "%s" in sql else [])
        print("ALLOWED", sql)
    except DatabaseError as exc:
        print("REFUSED", exc)
print("TYPE", WorkflowEvent.objects.get(pk=event.pk).type, WorkflowEvent.objects.count())
"""


def test_sqlite_refuses_update_and_delete_of_events(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env["DEBUG"] = "true"
    env["APPROVALS_EMBEDDED_WORKER"] = "false"
    manage = [sys.executable, str(ROOT / "manage.py")]

    for args in (["migrate", "-v0"], ["seed_demo"], ["shell", "-c", SCRIPT]):
        done = subprocess.run(
            [*manage, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-3000:]

    lines = [
        line
        for line in done.stdout.splitlines()
        if line.split(" ")[0] in {"ALLOWED", "REFUSED", "TYPE"}
    ]
    assert [line.split(" ")[0] for line in lines] == ["REFUSED", "REFUSED", "REFUSED", "TYPE"]
    assert "workflow events are append-only (UPDATE refused)" in lines[0]
    assert "workflow events are append-only (DELETE refused)" in lines[1]
    assert lines[3].split(" ")[1] == "WorkflowStarted"
    assert int(lines[3].split(" ")[2]) > 1
