"""Activities through the outbox and one real Celery worker.

    .venv/bin/python bench/activities.py

One worker process (``bench/activity_worker.py``: ``celery -A config worker -Q default
-c 1`` with the benchmark's no-op activity imported) on a Redis database of its own
(BENCH_ACTIVITY_BROKER_URL, default redis://127.0.0.1:6379/7, flushed first). The
template has one ``action`` step running ``bench_noop``, which records ``time.time()``
in Redis when it starts.

(a) Latency: workflows started one at a time at a fixed rate (BENCH_ACTIVITIES_RATE
    per second for BENCH_ACTIVITIES_SECONDS), with the worker idle between them. For
    each attempt: from ``dispatched_at`` (written by ``attempt_dispatch`` after the
    command committed, just before the broker send) and from ``not_before`` (the
    command's clock, before its commit) to the moment the activity function starts.
(b) Throughput: the worker is stopped, BENCH_ACTIVITIES_N workflows are started (their
    messages wait in Redis), the worker is started again; completed per second is N
    over the time from the first activity start to the last attempt finished.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    ROOT,
    VENV_BIN,
    Report,
    delete_workflows,
    server_env,
    setup_django,
    summarize_ms,
    verdict,
)

BROKER_URL = os.environ.get("BENCH_ACTIVITY_BROKER_URL", "redis://127.0.0.1:6379/7")
RATE = float(os.environ.get("BENCH_ACTIVITIES_RATE", "10"))
SECONDS = float(os.environ.get("BENCH_ACTIVITIES_SECONDS", "30"))
N = int(os.environ.get("BENCH_ACTIVITIES_N", "1000"))
WARMUP = 5
SUBJECT = "bench-activities"
TEMPLATE = "bench-noop-action"
P95_TARGET = 100.0  # ms, outbox to activity start
OUT = ROOT / "bench" / "out"


def template() -> dict[str, Any]:
    return {
        "key": TEMPLATE,
        "title": "Bench: one no-op action",
        "steps": [
            {
                "id": "noop",
                "kind": "action",
                "activity": "bench_noop",
                "queue": "default",
                "timeout": "PT30S",
            }
        ],
    }


def worker_env() -> dict[str, str]:
    return server_env(CELERY_BROKER_URL=BROKER_URL, PYTHONUNBUFFERED="1")


class Worker:
    def __init__(self, log: Path) -> None:
        self.log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [str(VENV_BIN / "python"), str(ROOT / "bench" / "activity_worker.py"), "default"],
                cwd=ROOT,
                env=worker_env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # warm shutdown
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def delete_runs(cur: Any) -> None:
    """Remove the benchmark's workflows (and what hangs off them) and its template."""
    delete_workflows(cur, SUBJECT)
    # The template names an activity only the benchmark registers: left published, it
    # would fail the system checks (approvals.E002) of every other process on this database.
    cur.execute("DELETE FROM approvals_workflowtemplate WHERE key = %s", [TEMPLATE])


def cleanup() -> None:
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cur:
        delete_runs(cur)


def start(alice: Any, subject_id: str) -> None:
    from approvals.services.workflows import workflow_start

    workflow_start(
        submitter=alice, template_key=TEMPLATE, subject_type=SUBJECT, subject_id=subject_id, data={}
    )


def finished(prefix: str) -> int:
    from approvals.models import ActivityAttempt

    return ActivityAttempt.objects.filter(
        workflow__subject_type=SUBJECT,
        workflow__subject_id__startswith=prefix,
        finished_at__isnull=False,
    ).count()


def wait_finished(prefix: str, n: int, worker: Worker, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while finished(prefix) < n:
        if worker.proc.poll() is not None:
            raise SystemExit(f"the worker exited ({worker.proc.returncode}); see {worker.log}")
        if time.monotonic() > deadline:
            raise SystemExit(f"only {finished(prefix)} of {n} attempts finished; see {worker.log}")
        time.sleep(0.05)


def attempts(prefix: str) -> list[dict[str, Any]]:
    from approvals.models import ActivityAttempt

    return list(
        ActivityAttempt.objects.filter(
            workflow__subject_type=SUBJECT, workflow__subject_id__startswith=prefix
        ).values("id", "idempotency_key", "not_before", "dispatched_at", "finished_at", "outcome")
    )


def starts() -> dict[str, float]:
    import bench_activities

    raw = bench_activities.client().hgetall(bench_activities.STARTS)
    return {k.decode(): float(v) for k, v in raw.items()}


def hashes(name: str) -> dict[str, float]:
    import bench_activities

    raw = bench_activities.client().hgetall(name)
    return {k.decode(): float(v) for k, v in raw.items()}


def main() -> None:
    try:
        run()
    finally:
        cleanup()


def run() -> None:
    os.environ["CELERY_BROKER_URL"] = BROKER_URL  # what attempt_dispatch sends with
    setup_django()
    import bench_activities
    from _common import seed

    from approvals.models import Workflow
    from approvals.services.templates import workflow_template_publish

    org = seed()
    alice = org["alice"]
    cleanup()
    workflow_template_publish(tenant=alice.tenant, definition=template())
    bench_activities.client().flushdb()
    report = Report("activities", "Activities: outbox to one Celery worker")
    OUT.mkdir(exist_ok=True)
    log = OUT / "activities-worker.log"
    log.write_bytes(b"")

    # (a) latency, the worker idle between starts
    worker = Worker(log)
    try:
        t = time.perf_counter()
        for i in range(WARMUP):
            start(alice, f"warm-{i}")
        wait_finished("warm-", WARMUP, worker, timeout=120)
        ready_s = time.perf_counter() - t
        n = int(RATE * SECONDS)
        t0 = time.perf_counter() + 0.1
        late = 0
        for i in range(n):
            delay = t0 + i / RATE - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.005:
                late += 1
            start(alice, f"lat-{i}")
        wait_finished("lat-", n, worker, timeout=120)
    finally:
        worker.stop()
    began = starts()
    lat_rows = attempts("lat-")
    from_dispatch, from_scheduled, to_finish = [], [], []
    missing = 0
    for a in lat_rows:
        s = began.get(a["idempotency_key"])
        if s is None or a["dispatched_at"] is None:
            missing += 1
            continue
        from_dispatch.append(s - a["dispatched_at"].timestamp())
        from_scheduled.append(s - a["not_before"].timestamp())
        to_finish.append(a["finished_at"].timestamp() - a["not_before"].timestamp())
    d, sch, fin = summarize_ms(from_dispatch), summarize_ms(from_scheduled), summarize_ms(to_finish)
    cols = ["measured", "attempts", "p50 ms", "p95 ms", "p99 ms", "max ms", "p95 target", "result"]

    def row(label: str, s: dict[str, float], target: bool = True) -> list[Any]:
        return [
            label,
            s["n"],
            s["p50"],
            s["p95"],
            s["p99"],
            s["max"],
            f"<= {P95_TARGET:.0f} ms" if target else "-",
            verdict(s["p95"] <= P95_TARGET) if target else "-",
        ]

    report.table(
        f"Outbox to activity start: {n} workflows started at {RATE:g}/s, one worker (-c 1)",
        cols,
        [
            row("dispatched_at (after commit) -> activity starts", d),
            row("not_before (command time, before commit) -> activity starts", sch),
            row("not_before -> finished_at (the outcome command's clock)", fin, target=False),
        ],
    )
    if missing:
        report.note(f"latency: {missing} attempts had no recorded start")
    if late:
        report.note(f"latency: {late} starts left more than 5 ms after their intended time")
    report.note(f"the worker took {ready_s:.1f} s from launch to finishing {WARMUP} warm-up runs")

    # (b) throughput: N messages waiting, then one worker drains them
    t = time.perf_counter()
    for i in range(N):
        start(alice, f"thr-{i}")
    start_s = time.perf_counter() - t
    worker = Worker(log)
    try:
        wait_finished("thr-", N, worker, timeout=600)
    finally:
        worker.stop()
    began = starts()
    rows = attempts("thr-")
    first = min(began[a["idempotency_key"]] for a in rows if a["idempotency_key"] in began)
    last = max(a["finished_at"].timestamp() for a in rows)
    rate = N / (last - first)
    outcomes: dict[str, int] = {}
    for a in rows:
        outcomes[a["outcome"]] = outcomes.get(a["outcome"], 0) + 1
    completed = Workflow.objects.filter(
        subject_type=SUBJECT, subject_id__startswith="thr-", status="COMPLETED"
    ).count()
    # Where a worker's turn goes, from the task's prerun/postrun signals and the activity.
    pre, post = hashes(bench_activities.PRERUN), hashes(bench_activities.POSTRUN)
    turns = sorted(
        (pre[str(a["id"])], began[a["idempotency_key"]], post[str(a["id"])])
        for a in rows
        if str(a["id"]) in pre and str(a["id"]) in post and a["idempotency_key"] in began
    )
    parts = {
        "task begins -> activity starts (claim: SELECT FOR UPDATE + UPDATE; data; params)": [
            s - p for p, s, _ in turns
        ],
        "activity starts -> task ends (the no-op, ActivityCompleted through the command "
        "path, commit)": [e - s for _, s, e in turns],
        "task ends -> next task begins (ack, next message from Redis)": [
            turns[i + 1][0] - turns[i][2] for i in range(len(turns) - 1)
        ],
    }
    report.table(
        f"Completed per second: {N:,} attempts waiting in the queue, one worker process (-c 1)",
        ["attempts", "outcomes", "workflows completed", "seconds", "completed/s", "ms each"],
        [[N, str(outcomes), completed, last - first, rate, (last - first) / N * 1000]],
    )
    breakdown = []
    for label, values in parts.items():
        ms = summarize_ms(values)
        breakdown.append([label, ms["p50"], ms["p95"], sum(values) / max(len(values), 1) * 1000])
    report.table(
        "Where a worker's turn goes (throughput run)",
        ["part", "p50 ms", "p95 ms", "mean ms"],
        breakdown,
    )
    report.note(
        f"throughput: the {N:,} workflows were started first ({start_s:.1f} s, "
        f"{N / start_s:.0f}/s in one process) with the worker stopped; the time runs "
        "from the first activity start to the last attempt's finished_at (the clock of the "
        "command that records its outcome)"
    )
    report.note(f"run at {dt.datetime.now(dt.UTC):%H:%M} UTC; broker {BROKER_URL}")
    bench_activities.client().flushdb()
    report.write()


if __name__ == "__main__":
    main()
