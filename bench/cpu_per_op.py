"""CPU per operation, of the app and of PostgreSQL, and bytes per event on disk.

    .venv/bin/python bench/cpu_per_op.py [--n 600]

In one process on one connection: ``--n`` starts, then as many manager decisions, then
``--n`` inbox reads through the whole Django stack (the test client, signed in as the
manager: middleware, session, the page's queries and its template). For each kind it
reads the process's own CPU time (``time.process_time``) and the PostgreSQL backend's
(user + system ticks of ``pg_backend_pid()`` in /proc: this machine runs both), so the
figures are CPU milliseconds per operation, which a shared machine's load moves far
less than wall-clock rates. Then the events' bytes on disk per row (table, partitions
and indexes, after VACUUM ANALYZE) and events per command. SCALE.md derives the
specification's sizing from these figures.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, expense_data, setup_django  # noqa: E402

SUBJECT_TYPE = "bench-cpu"


def backend_cpu_seconds(pid: int) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick


def measure(label: str, n: int, op: Any, pid: int) -> dict[str, Any]:
    app0, pg0, wall0 = time.process_time(), backend_cpu_seconds(pid), time.perf_counter()
    for i in range(n):
        op(i)
    app = time.process_time() - app0
    pg = backend_cpu_seconds(pid) - pg0
    wall = time.perf_counter() - wall0
    return {
        "operation": label,
        "n": n,
        "app_ms": app * 1000 / n,
        "pg_ms": pg * 1000 / n,
        "wall_ms": wall * 1000 / n,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=600)
    args = ap.parse_args()

    setup_django()
    from _common import delete_workflows, seed
    from django.db import connection, transaction
    from django.test import Client

    from approvals.models import PendingTask, User, WorkflowEvent
    from approvals.runtime.statistics import statistics_refresh
    from approvals.services.workflows import workflow_decide, workflow_start

    seed()
    with transaction.atomic(), connection.cursor() as cur:
        delete_workflows(cur, SUBJECT_TYPE)
    alice, bob = (User.objects.get(username=u) for u in ("alice", "bob"))
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = int(cur.fetchone()[0])
    run = uuid.uuid4().hex[:8]
    ids: list[Any] = []
    subjects = itertools.count()

    def start(i: int) -> None:
        ids.append(
            workflow_start(
                submitter=alice,
                template_key="expense-approval",
                subject_type=SUBJECT_TYPE,
                subject_id=f"{run}-{next(subjects)}",
                data=expense_data(i),
            ).workflow_id
        )

    def decide(i: int) -> None:
        workflow_decide(
            user=bob, workflow_id=ids[i], decision="approve", request_id=uuid.uuid4().hex
        )

    client = Client(HTTP_HOST="localhost")
    client.force_login(bob)

    def inbox(i: int) -> None:
        reply = client.get("/")
        assert reply.status_code == 200, reply.status_code

    def inbox_api(i: int) -> None:
        reply = client.get("/api/me/tasks")
        assert reply.status_code == 200, reply.status_code

    # A client revalidating what it holds: a 304 while nothing changed. A minute turning
    # over mid-run changes the tag (api/inbox_etag.py): that read is a full one, counted.
    held = {"tag": "", "full": 0}

    def inbox_api_unchanged(i: int) -> None:
        reply = client.get("/api/me/tasks", HTTP_IF_NONE_MATCH=held["tag"])
        if reply.status_code == 200:
            held["tag"], held["full"] = reply["ETag"], held["full"] + 1
        else:
            assert reply.status_code == 304, reply.status_code

    # warm: caches, prepared statements, templates
    for i in range(20):
        start(i)
        decide(i)
        inbox(i)
        inbox_api(i)
        inbox_api_unchanged(i)
    ids.clear()
    rows = [
        measure("start (workflow_start)", args.n, start, pid),
        measure("decision (workflow_decide, manager approves)", args.n, decide, pid),
    ]
    # bob's inbox now holds the warm-up's and any earlier runs' tasks: say how many
    for i in range(args.n // 2):  # half of them back on bob's inbox
        start(args.n + i)
    open_tasks = PendingTask.objects.filter(assignee=bob).count()
    # what the job refresh-statistics does within a minute of these rows arriving
    statistics_refresh()
    rows.append(measure("inbox page (GET /, signed in, rendered)", args.n, inbox, pid))
    rows.append(measure("inbox API (GET /api/me/tasks, first page)", args.n, inbox_api, pid))
    held["full"] = 0
    inbox_api_unchanged(0)  # the current tag
    held["full"] = 0
    rows.append(measure("inbox API, unchanged (304)", args.n, inbox_api_unchanged, pid))

    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE approvals_workflowevent")
        cur.execute(
            "SELECT coalesce(sum(pg_total_relation_size(relid)), 0) "
            "FROM pg_partition_tree('approvals_workflowevent')"
        )
        event_bytes = int(cur.fetchone()[0])
        cur.execute("SELECT count(*) FROM approvals_workflowevent")
        events = int(cur.fetchone()[0])
        cur.execute("SELECT count(*) FROM approvals_workflowevent WHERE request_id IS NOT NULL")
        commands = int(cur.fetchone()[0])
    # this run's commands: the warm-up's 20 starts and 20 decisions, then the measured
    per_command = WorkflowEvent.objects.filter(workflow__subject_type=SUBJECT_TYPE).count() / (
        40 + len(ids) + args.n
    )

    report = Report("cpu_per_op", "CPU per operation and bytes per event")
    report.table(
        f"One process, one connection; {args.n:,} of each (CPU from the kernel's counters)",
        ["operation", "n", "app CPU ms", "PostgreSQL CPU ms", "wall ms"],
        [[r["operation"], r["n"], r["app_ms"], r["pg_ms"], r["wall_ms"]] for r in rows],
    )
    report.table(
        "Events on disk (table, partitions and indexes after VACUUM ANALYZE)",
        ["events", "bytes", "bytes per event", "events per command (this run)"],
        [[events, event_bytes, event_bytes / max(events, 1), per_command]],
    )
    report.note(
        f"targets (issue: per-node cost): full inbox read <= 2 ms app CPU, decision <= 3.5 ms, "
        f"a 304 <= 0.5 ms; {held['full']} of the {args.n:,} conditional reads were full "
        "answers (the minute turned over); "
        f"bob held {open_tasks:,} open tasks at the inbox "
        f"reads; {commands:,} events in the table carry a request id"
    )
    report.write()


if __name__ == "__main__":
    main()
