"""Decisions and starts over HTTP, through gunicorn, on the bench database.

    .venv/bin/python bench/http_decisions.py [--workers 4] [--clients 8]

Phases: warm-up; starts at a fixed rate (50/s); starts saturated; a top-up of the pool
of workflows waiting on bob; decisions at a fixed rate (200/s); decisions saturated.
Fixed-rate phases are open loop (Python threads): each request has an intended send
time and its latency counts from then. Saturated phases are wrk (bench/wrk/api.lua)
with C keep-alive connections, each sending its next request when the last is answered.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    ROOT,
    Report,
    closed_loop,
    cpu_seconds_of,
    expense_data,
    gunicorn,
    open_loop,
    request,
    setup_django,
    summarize_ms,
    verdict,
    wrk_load,
)

SUBJECT_TYPE = "bench-http"
SAT_TARGET = 500.0  # decisions/s, saturated
START_SAT_TARGET = 400.0  # starts/s, saturated
DECIDE_P95_TARGET = 30.0  # ms, at 200 decisions/s offered
START_P95_TARGET = 40.0


LOAD_COLUMNS = [
    "load",
    "requests",
    "ok/s",
    "p50 ms",
    "p95 ms",
    "p99 ms",
    "max ms",
    "statuses",
    "target",
    "result",
]


def pending_for_bob(bob: object) -> list[str]:
    """Workflows (from earlier runs too) still waiting on bob's approval."""
    from approvals.models import PendingTask

    return [
        str(w)
        for w in PendingTask.objects.filter(
            assignee=bob, step="manager", workflow__subject_type=SUBJECT_TYPE
        )
        .order_by("id")
        .values_list("workflow_id", flat=True)
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--worker-class", default="sync")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--sat-seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--rate-seconds", type=float, default=20.0)
    ap.add_argument("--start-rate", type=float, default=50.0)
    ap.add_argument("--start-seconds", type=float, default=20.0)
    args = ap.parse_args()

    setup_django()
    from _common import api_token, seed

    org = seed()
    alice_token, bob_token = api_token(org["alice"]), api_token(org["bob"])
    report = Report("http_decisions", "HTTP: decisions and starts through gunicorn")
    run_id = uuid.uuid4().hex[:8]
    seq = itertools.count()

    def start_one(_: int = 0) -> int:
        body = {
            "template": "expense-approval",
            "subject": {"type": SUBJECT_TYPE, "id": f"{run_id}-{next(seq)}"},
            "data": expense_data(0),
        }
        status, _payload = request(port, "POST", "/api/workflows", body, alice_token)
        return status

    def decide_on(workflow_id: str) -> int:
        body = {"decision": "approve", "requestId": uuid.uuid4().hex}
        status, payload = request(
            port, "POST", f"/api/workflows/{workflow_id}/decisions", body, bob_token
        )
        if status != 200:
            print(f"decision on {workflow_id}: {status} {payload[:200]!r}", flush=True)
        return status

    log = ROOT / "bench" / ".gunicorn-http.log"
    with gunicorn(
        workers=args.workers, worker_class=args.worker_class, threads=args.threads, log=log
    ) as server:
        port = server.port
        report.note(
            f"gunicorn: {args.workers} {args.worker_class} workers"
            + (f" x {args.threads} threads" if args.threads > 1 else "")
            + "; saturated runs: wrk (2 threads) on the same machine; fixed-rate runs:"
            " Python threads, each request timed from its intended send time"
        )

        # Warm-up: every worker imports, connects and fills its caches.
        closed_loop(lambda c, n: start_one() if n < 10 else None, clients=args.workers, duration=10)
        warm = pending_for_bob(org["bob"])[: 10 * args.workers]
        closed_loop(
            lambda c, n: decide_on(warm[c * 10 + n]) if n < 10 else None,
            clients=args.workers,
            duration=10,
        )

        # (c) starts at a fixed rate.
        starts = open_loop(start_one, rate=args.start_rate, duration=args.start_seconds)
        st = summarize_ms(starts.latencies)

        # (d) starts back to back: wrk, C connections (they also fill the pool).
        start_sat = wrk_load(
            port,
            "start",
            token=alice_token,
            connections=args.clients,
            duration=args.sat_seconds,
            run=f"{run_id}-sat",
            subject_type=SUBJECT_TYPE,
            data=json.dumps(expense_data(0)),
        )

        # Top up the pool of workflows waiting on bob (not measured).
        need = int(args.rate * args.rate_seconds) + int(SAT_TARGET * 1.5 * args.sat_seconds)
        missing = max(0, need - len(pending_for_bob(org["bob"])))
        if missing:
            per_client = -(-missing // args.clients)
            closed_loop(
                lambda c, n: start_one() if n < per_client else None,
                clients=args.clients,
                duration=600,
            )
        pool = pending_for_bob(org["bob"])
        print(f"{len(pool)} workflows wait on bob", flush=True)

        # (b) decisions at a fixed offered rate.
        n_rate = int(args.rate * args.rate_seconds)
        fixed_ids, pool = pool[:n_rate], pool[n_rate:]
        fixed = open_loop(
            lambda i: decide_on(fixed_ids[i]), rate=args.rate, duration=args.rate_seconds
        )
        fx = summarize_ms(fixed.latencies)

        # (a) saturation: wrk, C connections, each thread on its own workflows.
        ids_file = ROOT / "bench" / "out" / f"http-ids-{run_id}"
        ids_file.parent.mkdir(exist_ok=True)
        ids_file.write_text("\n".join(pool) + "\n")
        pids = [server.proc.pid, *server.worker_pids()]
        cpu0 = cpu_seconds_of(pids)
        sat = wrk_load(
            port,
            "decide",
            token=bob_token,
            connections=args.clients,
            duration=args.sat_seconds,
            ids=str(ids_file),
        )
        server_cpu = (cpu_seconds_of(pids) - cpu0) / sat.elapsed
        ids_file.unlink()
        sa = sat.latency
        rss = server.rss_mib()

    def codes(r: object) -> str:
        return json.dumps(r.statuses, sort_keys=True)

    if sat.exhausted:
        report.note(
            f"the pool ran out: {sat.exhausted} requests of the saturated run were not decisions"
        )
    report.table(
        "Decisions (POST /api/workflows/{id}/decisions, approve, unique requestIds)",
        LOAD_COLUMNS,
        [
            [
                f"saturated (wrk), {args.clients} connections, {args.sat_seconds:.0f} s",
                sat.requests,
                sat.throughput,
                sa["p50"],
                sa["p95"],
                sa["p99"],
                sa["max"],
                codes(sat),
                f">= {SAT_TARGET:.0f}/s",
                verdict(sat.throughput >= SAT_TARGET),
            ],
            [
                f"open loop {args.rate:.0f}/s, {args.rate_seconds:.0f} s",
                fixed.count,
                fixed.throughput,
                fx["p50"],
                fx["p95"],
                fx["p99"],
                fx["max"],
                codes(fixed),
                f"p95 <= {DECIDE_P95_TARGET:.0f} ms",
                verdict(fx["p95"] <= DECIDE_P95_TARGET),
            ],
        ],
    )
    rows = [
        [
            f"open loop {args.start_rate:.0f}/s, {args.start_seconds:.0f} s",
            starts.count,
            starts.throughput,
            st["p50"],
            st["p95"],
            st["p99"],
            st["max"],
            codes(starts),
            f"p95 <= {START_P95_TARGET:.0f} ms",
            verdict(st["p95"] <= START_P95_TARGET),
        ],
    ]
    ss = start_sat.latency
    rows.append(
        [
            f"saturated (wrk), {args.clients} connections, {args.sat_seconds:.0f} s",
            start_sat.requests,
            start_sat.throughput,
            ss["p50"],
            ss["p95"],
            ss["p99"],
            ss["max"],
            codes(start_sat),
            f">= {START_SAT_TARGET:.0f}/s",
            verdict(start_sat.throughput >= START_SAT_TARGET),
        ]
    )
    report.table(
        "Starts (POST /api/workflows, expense ₹45,000: pending the manager)",
        LOAD_COLUMNS,
        rows,
    )
    report.table(
        "Server during the saturated decisions",
        ["measure", "value"],
        [
            ["gunicorn CPU (cores busy, of 2)", server_cpu],
            ["wrk CPU (cores busy)", sat.cpu],
            ["late starts in the 100/s run (sent > 5 ms after due)", fixed.late_starts],
            ["gunicorn master RSS, MiB", rss["master"]],
            ["worker RSS mean, MiB", rss["worker_mean"]],
            ["worker RSS max, MiB", rss["worker_max"]],
            ["all workers RSS, MiB", rss["workers_total"]],
        ],
    )
    report.write()


if __name__ == "__main__":
    main()
