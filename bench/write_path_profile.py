"""Where PostgreSQL spends a start's and a decision's CPU, by what it does for us.

    .venv/bin/python bench/write_path_profile.py [--n 600] [--hz 4000]

One process, one connection, the bench database: ``--n`` starts (alice), then as many
manager approvals (bob). During each phase ``perf record -g`` samples the PostgreSQL
backend that serves the connection; each row of the table is the share of that
backend's samples spent in (below) one of PostgreSQL's own functions, which stands for
one thing the write path asks of it, times the backend's CPU per operation read from
/proc in the same phase. The shares are of the backend's own samples, so the machine's
other load moves them far less than it moves a difference between two runs (what
bench/write_path.py measures, a variant at a time).

The rows nest where PostgreSQL's calls do (the tenant check runs inside the executor;
the foreign keys' checks and the inbox's deferred triggers inside the commit), so they
do not add up to 100%. Needs ``perf`` and a PostgreSQL on this machine (root, or
``kernel.perf_event_paranoid`` ≤ 1); function names come from the server's exported
symbols.
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, expense_data, setup_django  # noqa: E402
from cpu_per_op import backend_cpu_seconds  # noqa: E402

# What the write path asks of PostgreSQL, and the server function under which it runs.
FEATURES: list[tuple[str, tuple[str, ...]]] = [
    (
        "row-level security: the sealed tenant, checked once per policed table and"
        " statement (approvals_acting_tenant)",
        ("fmgr_security_definer",),
    ),
    ("set_config: the tenant and role of the transaction", ("set_config_by_name",)),
    ("foreign-key checks at commit", ("SPI_execute_snapshot",)),
    (
        "PL/pgSQL triggers: the inbox counters (and the visits' retraction)",
        ("plpgsql_exec_trigger",),
    ),
    ("index maintenance: entries inserted", ("ExecInsertIndexTuples",)),
    ("heap rows written (insert, update)", ("heap_insert", "heap_update")),
    ("WAL records written", ("XLogInsert",)),
    ("WAL flushed at commit (fsync)", ("XLogFlush",)),
    (
        "partitions: pruning and routing of the events",
        ("get_matching_partitions", "ExecFindPartition"),
    ),
    ("the lock read's subqueries (participant, delegation, grants)", ("ExecSubPlan",)),
    (
        "executor start-up and shut-down, per statement",
        ("standard_ExecutorStart", "standard_ExecutorEnd"),
    ),
    ("planning: a prepared statement's plan looked up or made", ("GetCachedPlan",)),
    ("the socket: reading commands, sending answers", ("secure_read", "secure_write")),
]


def _shares(data: Path) -> dict[str, float]:
    """Each symbol's inclusive share (children included) of the recorded samples."""
    report = subprocess.run(
        [
            "perf",
            "report",
            "-i",
            str(data),
            "--children",
            "--sort",
            "symbol",
            "--stdio",
            "-g",
            "none",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    shares: dict[str, float] = {}
    for line in report.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(\S+)", line)
        if m:
            shares.setdefault(m.group(2), float(m.group(1)))
    return shares


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--hz", type=int, default=4000)
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("perf is not installed (apt-get install linux-perf): nothing measured")

    setup_django()
    from _common import seed
    from django.db import connection

    from approvals.services.workflows import workflow_decide, workflow_start

    users = seed()
    alice, bob = users["alice"], users["bob"]
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
                subject_type="bench-write-profile",
                subject_id=f"{run}-{next(subjects)}",
                data=expense_data(i),
            ).workflow_id
        )

    def decide(i: int) -> None:
        workflow_decide(
            user=bob, workflow_id=ids[i], decision="approve", request_id=uuid.uuid4().hex
        )

    for i in range(50):  # warm: prepared statements, caches
        start(i)
        decide(i)
    ids.clear()

    phases: dict[str, tuple[float, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for phase, op in (("start", start), ("decision", decide)):
            data = Path(tmp) / f"{phase}.data"
            perf = subprocess.Popen(
                ["perf", "record", "-F", str(args.hz), "-g", "-p", str(pid), "-o", str(data)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.0)  # perf attached
            cpu0 = backend_cpu_seconds(pid)
            for i in range(args.n):
                op(i)
            pg_ms = (backend_cpu_seconds(pid) - cpu0) * 1000 / args.n
            perf.send_signal(signal.SIGINT)
            perf.wait()
            phases[phase] = (pg_ms, _shares(data))

    rows = []
    for label, symbols in FEATURES:
        row: list[Any] = [label]
        for phase in ("start", "decision"):
            pg_ms, shares = phases[phase]
            share = sum(shares.get(s, 0.0) for s in symbols)
            row += [f"{share:.1f}%", pg_ms * share / 100]
        rows.append(row)
    rows.append(
        [
            "all of the backend (its /proc ticks)",
            "100%",
            phases["start"][0],
            "100%",
            phases["decision"][0],
        ]
    )
    report = Report("write_path_profile", "Where PostgreSQL spends a command's CPU")
    report.table(
        f"PostgreSQL backend CPU by what it does, {args.n} starts then {args.n} manager"
        f" approvals, one connection, perf at {args.hz} Hz (share of the backend's samples;"
        " ms per operation)",
        ["what PostgreSQL does for the write path", "start", "ms", "decision", "ms"],
        rows,
    )
    report.note(
        "Inclusive shares: a row counts everything below its function, and rows nest (the"
        " tenant check inside the executor, the foreign keys' checks and deferred triggers"
        " inside the commit), so they do not add up."
    )
    report.write()


if __name__ == "__main__":
    main()
