"""Starts and decisions in-process, side by side with django-viewflow 2.4.

    .venv/bin/python bench/inprocess.py [--n 1000] [--procs 2] [--no-peer]

The same expense approval as the peer's harness (../shared/peer-viewflow): start, the
manager approves, finance approves. Each phase runs in one process and then in
``--procs`` OS processes (each its own connection, released together by a barrier).
The peer runs in the same invocation, right after ours, so the ratios compare figures
taken in the same minute. SQL statements per operation are counted by Django; round
trips to PostgreSQL are counted on the wire by a relay (bench/_roundtrips.py). CPU
milliseconds per operation are read for each row: the app's, its PostgreSQL backends'
and the whole machine's, beside the peer's Python; with two processes the machine is
saturated, and those, not the rates, say what an operation costs.
The headline ratios are appended to bench/ratio_history.jsonl, and the last ones are
shown, so a regression shows.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    ROOT,
    Report,
    cpu_seconds_of,
    expense_data,
    setup_django,
    summarize_ms,
)

PEER = (
    Path(
        os.environ.get("APPROVALS_PEER_VIEWFLOW")
        or next(
            (
                str(p)
                for p in (ROOT.parent / "shared", Path("/work/shared"))
                if (p / "peer-viewflow" / "run.sh").exists()
            ),
            str(ROOT.parent / "shared"),
        )
    )
    / "peer-viewflow"
    / "run.sh"
)
# --guard: a drop of more than this share of the recent ratios is warned about.
GUARD_DROP = 0.25
GUARD_HISTORY = 5
HISTORY = ROOT / "bench" / "ratio_history.jsonl"
SUBJECT_TYPE = "bench-inprocess"
PHASES = ("start", "manager", "finance")


def _ops(n: int, run: str) -> dict[str, Callable[[int], Any]]:
    """One callable per phase; call i works on the i-th workflow of this process."""
    from approvals.models import User
    from approvals.services.workflows import workflow_decide, workflow_start

    alice, bob, fiona = (User.objects.get(username=u) for u in ("alice", "bob", "fiona"))
    ids: list[Any] = [None] * n

    def start(i: int) -> None:
        ids[i] = workflow_start(
            submitter=alice,
            template_key="expense-approval",
            subject_type=SUBJECT_TYPE,
            subject_id=f"{run}-{i}",
            data=expense_data(i),
        ).workflow_id

    def decide(user: Any) -> Callable[[int], None]:
        def one(i: int) -> None:
            r = workflow_decide(
                user=user, workflow_id=ids[i], decision="approve", request_id=uuid.uuid4().hex
            )
            assert not r.duplicate

        return one

    return {"start": start, "manager": decide(bob), "finance": decide(fiona)}


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _run(n: int, run: str, barrier: Any = None) -> dict[str, Any]:
    """All three phases over ``n`` workflows; per phase the latencies, the span, and
    the CPU seconds of this process and of the PostgreSQL backend serving it."""
    ops = _ops(n, run)
    backend = _backend_pid()
    out: dict[str, Any] = {}
    for phase in PHASES:
        if barrier is not None:
            barrier.wait()
        op = ops[phase]
        lat = []
        busy0 = _machine_busy()
        t0, app0, pg0 = time.time(), time.process_time(), cpu_seconds_of([backend])
        for i in range(n):
            t = time.perf_counter()
            op(i)
            lat.append(time.perf_counter() - t)
        out[phase] = {
            "lat": lat,
            "t0": t0,
            "t1": time.time(),
            "app_cpu": time.process_time() - app0,
            "pg_cpu": cpu_seconds_of([backend]) - pg0,
            # The whole machine's busy CPU over the phase: exact in one process; with
            # several, each overlaps the others' (main() reads it across the barrier).
            "machine_cpu": _machine_busy() - busy0,
        }
    return out


def _machine_busy() -> float:
    """CPU seconds the whole machine has spent busy (all cores, /proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _cpu_per_op(parts: list[dict[str, Any]], phases: tuple[str, ...]) -> dict[str, float]:
    """App and PostgreSQL backend CPU milliseconds per operation over ``phases``."""
    ops = sum(len(p[ph]["lat"]) for p in parts for ph in phases)
    app = sum(p[ph]["app_cpu"] for p in parts for ph in phases)
    pg = sum(p[ph]["pg_cpu"] for p in parts for ph in phases)
    return {"app": app / ops * 1000, "pg": pg / ops * 1000}


def _child(n: int, run: str, barrier: Any, queue: Any) -> None:
    setup_django()
    queue.put(_run(n, run, barrier))


def _aggregate(parts: list[dict[str, Any]], phase: str) -> dict[str, float]:
    lat = [x for p in parts for x in p[phase]["lat"]]
    span = max(p[phase]["t1"] for p in parts) - min(p[phase]["t0"] for p in parts)
    return {"ops_s": len(lat) / span, **summarize_ms(lat)}


def _decisions(parts: list[dict[str, Any]]) -> dict[str, float]:
    lat = [x for p in parts for ph in ("manager", "finance") for x in p[ph]["lat"]]
    span = sum(
        max(p[ph]["t1"] for p in parts) - min(p[ph]["t0"] for p in parts)
        for ph in ("manager", "finance")
    )
    return {"ops_s": len(lat) / span, **summarize_ms(lat)}


def _per_operation_costs(run: str, n: int = 50) -> dict[str, dict[str, float]]:
    """SQL statements (Django's count) and round trips (on the wire) per operation."""
    from _roundtrips import RoundTripCounter
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    settings = connection.settings_dict
    connection.close()
    port = int(settings.get("PORT") or 5432)
    costs: dict[str, dict[str, float]] = {}
    with RoundTripCounter(settings.get("HOST") or "127.0.0.1", port) as relay:
        settings["HOST"], settings["PORT"] = "127.0.0.1", relay.port
        try:
            ops = _ops(n, f"{run}-count")
            for phase in PHASES:
                turns = relay.turns
                with CaptureQueriesContext(connection) as q:
                    for i in range(n):
                        ops[phase](i)
                costs[phase] = {
                    "statements": len(q.captured_queries) / n,
                    "round_trips": (relay.turns - turns) / n,
                }
        finally:
            connection.close()
            settings["PORT"] = port
    return costs


_PEER_LINE = re.compile(r"^\s+(start|decisions_all|decisions)\s+([\d.]+) ops/s")
_PEER_CPU = re.compile(r"^\s+(start|manager|finance)\s.*python cpu ([\d.]+) ms/op")


def _peer(n: int) -> dict[str, float]:
    """The peer's starts/s and decisions/s, one process and two."""
    # The peer is its own Django project: none of our settings may leak into it.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "DATABASE", "APPROVALS_", "CELERY_", "SECRET_KEY"))
    }
    proc = subprocess.run(
        ["bash", str(PEER), str(n)],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"the peer failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    figures: dict[str, float] = {}
    procs = 1
    decided: dict[int, list[float]] = {1: [], 2: []}
    for line in proc.stdout.splitlines():
        if line.startswith("2 OS processes"):
            procs = 2
        if m := _PEER_LINE.match(line):
            kind = "starts" if m.group(1) == "start" else "decisions"
            figures[f"{kind}_{procs}"] = float(m.group(2))
        if m := _PEER_CPU.match(line):
            if m.group(1) == "start":
                figures[f"start_cpu_{procs}"] = float(m.group(2))
            else:  # as many manager as finance decisions: their mean is per decision
                decided[procs].append(float(m.group(2)))
    for procs, values in decided.items():
        if values:
            figures[f"decision_cpu_{procs}"] = sum(values) / len(values)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000, help="workflows per run")
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument(
        "--guard",
        action="store_true",
        help="compare the ratios with the recorded ones and warn on a drop; record nothing",
    )
    args = ap.parse_args()
    if args.guard:
        try:
            _guard(args)
        except Exception as exc:  # a guard never fails the build: it warns
            print(f"WARNING: the ratio guard could not run: {exc!r}", flush=True)
        return

    setup_django()
    from _common import seed

    seed()
    run = uuid.uuid4().hex[:8]
    report = Report("inprocess", "Starts and decisions in-process, side by side with viewflow")
    _run(min(100, args.n), f"{run}-warm")  # caches, connections, JIT of the templates

    ours: dict[str, float] = {}
    rows = []
    one = [_run(args.n, f"{run}-1")]
    ctx = mp.get_context("spawn")
    # This process passes the barrier too: it reads the machine's busy CPU as each
    # phase begins (every child has finished the phase before) and once all are done.
    barrier = ctx.Barrier(args.procs + 1)
    queue = ctx.Queue()
    each = args.n // args.procs
    children = [
        ctx.Process(target=_child, args=(each, f"{run}-p{k}", barrier, queue))
        for k in range(args.procs)
    ]
    for c in children:
        c.start()
    marks = []
    for _ in PHASES:
        barrier.wait()
        marks.append(_machine_busy())
    many = [queue.get() for _ in children]
    marks.append(_machine_busy())
    for c in children:
        c.join()
    many_machine = {ph: marks[k + 1] - marks[k] for k, ph in enumerate(PHASES)}
    for label, parts, procs in (("1 process", one, 1), (f"{args.procs} processes", many, 2)):
        for phase in PHASES:
            a = _aggregate(parts, phase)
            rows.append([label, phase, a["ops_s"], a["p50"], a["p95"], a["p99"]])
        d = _decisions(parts)
        rows.append([label, "decisions (both)", d["ops_s"], d["p50"], d["p95"], d["p99"]])
        ours[f"starts_{procs}"] = _aggregate(parts, "start")["ops_s"]
        ours[f"decisions_{procs}"] = d["ops_s"]
    report.table(
        f"Ours: {args.n:,} workflows (start, manager approves, finance approves)",
        ["run", "operation", "ops/s", "p50 ms", "p95 ms", "p99 ms"],
        rows,
    )
    ours_cpu = {}
    for procs, parts, machine in (
        (1, one, {ph: one[0][ph]["machine_cpu"] for ph in PHASES}),
        (2, many, many_machine),
    ):
        for kind, phases in (("start", ("start",)), ("decision", ("manager", "finance"))):
            count = sum(len(p[ph]["lat"]) for p in parts for ph in phases)
            ours_cpu[(kind, procs)] = {
                **_cpu_per_op(parts, phases),
                "machine": sum(machine[ph] for ph in phases) / count * 1000,
            }
    costs = _per_operation_costs(run)
    report.table(
        "Cost per operation (50 of each; round trips counted on the wire, BEGIN and COMMIT"
        " included)",
        ["operation", "SQL statements", "round trips", "target"],
        [[p, c["statements"], c["round_trips"], "<= 3"] for p, c in costs.items()],
    )
    if args.no_peer or not PEER.exists():
        _cpu_table(report, ours_cpu, {})
        report.note(f"the peer was not run ({PEER} {'skipped' if args.no_peer else 'missing'})")
        report.write()
        return
    peer = _peer(args.n)
    _cpu_table(report, ours_cpu, peer)
    targets = {"starts": 2.0, "decisions": 3.0}
    ratio_rows = []
    entry: dict[str, Any] = {"date": f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"}
    for key in ("starts_1", "starts_2", "decisions_1", "decisions_2"):
        kind, procs = key.split("_")
        ratio = ours[key] / peer[key] if peer.get(key) else float("nan")
        entry[key] = round(ratio, 2)
        ratio_rows.append(
            [
                f"{kind}/s, {procs} process{'es' if procs != '1' else ''}",
                peer.get(key, float("nan")),
                ours[key],
                f"{ratio:.2f}x",
                f">= {targets[kind]:.0f}x",
                "PASS" if ratio >= targets[kind] else "MISS",
            ]
        )
    report.table(
        f"Side by side with django-viewflow 2.4 (`{PEER.name} {args.n}` run right after ours)",
        ["measure", "viewflow", "ours", "ratio", "target", "result"],
        ratio_rows,
    )
    entry["round_trips"] = {p: c["round_trips"] for p, c in costs.items()}
    entry["commit"] = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    with HISTORY.open("a") as f:
        f.write(json.dumps(entry) + "\n")
    history = [json.loads(line) for line in HISTORY.read_text().splitlines() if line.strip()]
    report.table(
        "History of the headline ratios (ours / viewflow, same minute; newest last)",
        ["date", "commit", "starts 1p", "starts 2p", "decisions 1p", "decisions 2p"],
        [
            [
                h["date"],
                h.get("commit", ""),
                h["starts_1"],
                h["starts_2"],
                h["decisions_1"],
                h["decisions_2"],
            ]
            for h in history[-10:]
        ],
    )
    report.note(f"load average at the end: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report.write()


def _cpu_table(
    report: Report, ours: dict[tuple[str, int], dict[str, float]], peer: dict[str, float]
) -> None:
    """CPU milliseconds per operation: ours split into the app's and its PostgreSQL
    backend's, and the whole machine's busy time; the peer's Python, as its harness
    reports it (it reports no PostgreSQL figure). With two processes on two cores the
    machine is saturated, and CPU per operation, not operations per second, says what
    each operation costs."""
    rows = []
    for (kind, procs), c in ours.items():
        key = f"{kind}_cpu_{procs}"
        rows.append(
            [
                f"{kind}, {procs} process{'es' if procs != 1 else ''}",
                c["app"],
                c["pg"],
                c["app"] + c["pg"],
                c["machine"],
                peer.get(key, float("nan")),
            ]
        )
    report.table(
        "CPU per operation, ms (ours: this process or these processes, their PostgreSQL"
        " backends, and the whole machine's busy time over the phase)",
        ["operation", "ours app", "ours PG", "ours both", "ours machine", "viewflow Python"],
        rows,
    )


def _guard(args: Any) -> None:
    """A small run of ours and the peer's, and the four ratios compared with the median
    of the last recorded ones: a drop of more than GUARD_DROP is printed as a warning.
    The machine is shared and noisy, so this warns and never fails; the statement and
    round-trip counts, which are stable, are asserted by tests."""
    if not PEER.exists():
        print(f"WARNING: the ratio guard was skipped: no peer at {PEER}", flush=True)
        return
    from _common import ensure_bench_db, seed

    ensure_bench_db()
    setup_django()
    seed()
    run = uuid.uuid4().hex[:8]
    _run(min(50, args.n), f"{run}-warm")
    parts = [_run(args.n, f"{run}-1")]
    ours = {
        "starts_1": _aggregate(parts, "start")["ops_s"],
        "decisions_1": _decisions(parts)["ops_s"],
    }
    peer = _peer(args.n)
    history = [json.loads(line) for line in HISTORY.read_text().splitlines() if line.strip()]
    recent = history[-GUARD_HISTORY:]
    for key, value in ours.items():
        if not peer.get(key):
            print(f"WARNING: the peer gave no {key} figure", flush=True)
            continue
        ratio = value / peer[key]
        past = sorted(h[key] for h in recent if key in h)
        if not past:
            print(f"ratio guard: {key} {ratio:.2f}x (nothing recorded to compare)", flush=True)
            continue
        median = past[len(past) // 2]
        line = f"{key} {ratio:.2f}x against {median:.2f}x, the median of the last {len(past)}"
        if ratio < median * (1 - GUARD_DROP):
            print(
                f"WARNING: ratio guard: {line}: a drop of {1 - ratio / median:.0%}. Run"
                " `.venv/bin/python bench/inprocess.py` on a quiet machine to confirm,"
                " and bench/write_path.py to see what grew.",
                flush=True,
            )
        else:
            print(f"ratio guard: {line}: no drop past {GUARD_DROP:.0%}", flush=True)


if __name__ == "__main__":
    main()
