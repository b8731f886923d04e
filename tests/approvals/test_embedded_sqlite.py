"""``make run`` mode: no settings, SQLite, the activity runner in-process. Run in a
subprocess so it gets its own settings, as a newcomer's laptop would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import time
from approvals.models import User, Workflow
from approvals.services.workflows import workflow_start, workflow_decide
from approvals.workers.scheduler import scheduler_tick

alice, bob, fiona = (User.objects.get(username=u) for u in ("alice", "bob", "fiona"))
started = workflow_start(submitter=alice, template_key="purchase-request", subject_type="po",
                         subject_id="PO-1", data={"amountPaise": 500000, "currency": "INR",
                                                  "category": "SOFTWARE", "item": "IDE"})
wid = started.workflow_id
# The API's inbox list: plain SQL whose values SQLite gives as text, converted as the ORM
# converts them, and rendered from its serializer's declarations.
import datetime as dt, uuid
from approvals.api.rendering import compiled
from approvals.api.serializers import TaskPageResponse
from approvals.selectors.tasks import task_list_for_user
(task,) = [t for t in task_list_for_user(user=bob).tasks if t.workflow_id == wid]
assert isinstance(task.workflow_id, uuid.UUID) and task.due_at.tzinfo is not None, task
page = task_list_for_user(user=bob)
assert compiled(TaskPageResponse)(page) == TaskPageResponse(page).data
print("INBOX", task.step, task.workflow.public_status)
workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="b1")
for _ in range(100):  # the in-process runner reserves the budget
    if Workflow.objects.get(pk=wid).public_status == "PENDING_FINANCE":
        break
    time.sleep(0.05)
workflow_decide(user=fiona, workflow_id=wid, decision="reject", request_id="f1", comment="no")
for _ in range(100):  # ... and releases it
    scheduler_tick()
    if Workflow.objects.get(pk=wid).status == "REJECTED":
        break
    time.sleep(0.05)
wf = Workflow.objects.get(pk=wid)
print("RESULT", wf.status, wf.version, wf.events.count())
"""


def test_make_run_mode_runs_workflows_and_activities_on_sqlite(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env["DEBUG"] = "true"  # as `make run` sets it
    manage = [sys.executable, str(ROOT / "manage.py")]

    for args in (["migrate", "-v0"], ["seed_demo"], ["shell", "-c", SCRIPT]):
        done = subprocess.run(
            [*manage, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-3000:]

    # The console mail backend prints the demo's mail around it: read the one line.
    assert "INBOX manager PENDING_MANAGER" in done.stdout.splitlines()
    [line] = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    _, status, version, events = line.split()
    assert status == "REJECTED"
    assert int(version) == int(events) > 10
