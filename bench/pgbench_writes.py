"""Where one PostgreSQL primary stops: pgbench over the statements a start and a
decision send, at 1, 2, 4 and 8 clients, beside pgbench's own TPC-B.

    .venv/bin/python bench/run_all.py pgbench_writes   # or bench/pgbench_writes.py

The statements are captured, not written by hand: one start and one decision through the
command path (``workflow_start``, ``workflow_decide``) under Django's query capture,
with parameters bound on the client so the text holds the values. Statements that only
fill a process's directory cache (content types, role groups, group members, contact
details: a warm process does not send them) are left out. Each command keeps its two
round trips: what the command path sends before its first write (BEGIN, the tenant's
settings, the lock or the template, the directory version, the request id or subject
lookup) is one round trip, its writes and COMMIT the second; pgbench sends each as one
compound statement (``\\;``, simple protocol). Every workflow id, visit id and subject
in the text is rewritten from a random 63-bit number (``\\set r random``), so each
transaction writes a new workflow: ``start.sql`` one start, ``start_decide.sql`` a
start and then the manager's approval of that workflow (two commands).

pgbench runs on the same 2-core machine as PostgreSQL (and whatever else runs there),
so its own CPU is part of the figure; the saturation point is the client count past
which commands/s stops growing (less than 10% more).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, ensure_bench_db, expense_data, setup_django  # noqa: E402

CLIENTS = (1, 2, 4, 8)
# Filled by a cold cache only (runtime.directory, ContentType's cache): not sent warm.
CACHE_FILLS = (
    '"django_content_type"',
    '"auth_group"',
    "approvals_orggroup_members",
    "notifications_notificationpreference",
)
_UUID = re.compile(r"'([0-9a-f]{32})'::uuid")
_TPS = re.compile(r"tps = ([\d.]+) \(without initial connection time\)")
_LATENCY = re.compile(r"latency average = ([\d.]+) ms")


def capture() -> tuple[list[str], list[str], str]:
    """The SQL of one start and one decision (values bound), and the subject id."""
    from _common import seed
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, override_settings

    from approvals.services.workflows import workflow_decide, workflow_start

    org = seed()
    subject = uuid.uuid4().hex
    with override_settings(APPROVALS_DB_PREPARE_THRESHOLD=None):
        for i in range(3):  # warm the process's caches as a serving process has them
            warm = workflow_start(
                submitter=org["alice"],
                template_key="expense-approval",
                subject_type="pgbench-warm",
                subject_id=uuid.uuid4().hex,
                data=expense_data(i),
            )
            workflow_decide(
                user=org["bob"],
                workflow_id=warm.workflow_id,
                decision="approve",
                request_id=uuid.uuid4().hex,
            )
        with CaptureQueriesContext(connection) as started:
            result = workflow_start(
                submitter=org["alice"],
                template_key="expense-approval",
                subject_type="pgbench",
                subject_id=subject,
                data=expense_data(1),
            )
        with CaptureQueriesContext(connection) as decided:
            workflow_decide(
                user=org["bob"],
                workflow_id=result.workflow_id,
                decision="approve",
                request_id=uuid.uuid4().hex,
            )
    keep = [
        [q["sql"] for q in c.captured_queries if not any(f in q["sql"] for f in CACHE_FILLS)]
        for c in (started, decided)
    ]
    return keep[0], keep[1], subject


def _round_trips(statements: list[str]) -> list[list[str]]:
    """Reads before the first write, then the writes and COMMIT."""
    writes = ("INSERT", "UPDATE", "DELETE", "WITH")
    first = next(
        (i for i, s in enumerate(statements) if s.lstrip().upper().startswith(writes)),
        len(statements),
    )
    return [statements[:first], statements[first:]]


def script(commands: list[list[str]], subject: str) -> str:
    """A pgbench script: one line per round trip, each workflow id, visit id and the
    subject made from ``:r``."""
    ids: dict[str, int] = {}

    def fresh(m: re.Match[str]) -> str:
        k = ids.setdefault(m.group(1), len(ids) + 1)
        return f"(lpad(to_hex(:r::bigint), 20, '0') || '{k:012x}')::uuid"

    lines = ["\\set r random(1, 9000000000000000000)"]
    for statements in commands:
        for trip in _round_trips(statements):
            if not trip:
                continue
            text = " \\; ".join(" ".join(s.split()) for s in trip)
            text = _UUID.sub(fresh, text).replace(f"'{subject}'", "('s' || :r::text)")
            lines.append(text + ";")
    return "\n".join(lines) + "\n"


def pgbench(url: str, args: list[str]) -> dict[str, float]:
    proc = subprocess.run(
        ["pgbench", *args, *_conn_args(url)],
        capture_output=True,
        text=True,
        check=False,
    )
    tps, latency = _TPS.search(proc.stdout), _LATENCY.search(proc.stdout)
    if proc.returncode != 0 or tps is None:
        raise RuntimeError(f"pgbench failed: {proc.stdout[-800:]}\n{proc.stderr[-800:]}")
    failed = re.search(r"number of failed transactions: (\d+)", proc.stdout)
    return {
        "tps": float(tps.group(1)),
        "latency_ms": float(latency.group(1)) if latency else float("nan"),
        "failed": float(failed.group(1)) if failed else 0.0,
    }


def saturation(rates: dict[int, float]) -> int:
    """The fewest clients that reach 90% of the best rate: more clients add waiting,
    not throughput (the runs are noisy on a shared machine, so not "the first step that
    grows less than 10%")."""
    best = max(rates.values())
    return min(c for c, rate in rates.items() if rate >= 0.9 * best)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=20, help="per pgbench run")
    ap.add_argument("--scale", type=int, default=10, help="TPC-B scale factor")
    args = ap.parse_args()
    url = ensure_bench_db()
    setup_django()
    from django.db import connection

    start, decide, subject = capture()
    report = Report("pgbench_writes", "Where one primary stops: pgbench on our own statements")
    rows: list[list[Any]] = []
    commands: dict[str, dict[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="pgbench-") as tmp:
        files = {
            "start": (script([start], subject), 1),
            "start then decision": (script([start, decide], subject), 2),
        }
        for name, (text, per) in files.items():
            path = Path(tmp) / f"{name.replace(' ', '_')}.sql"
            path.write_text(text)
            commands[name] = {}
            for clients in CLIENTS:
                got = pgbench(
                    url,
                    ["-n", "-M", "simple", "-f", str(path), "-c", str(clients), "-j",
                     str(min(clients, 2)), "-T", str(args.seconds)],
                )  # fmt: skip
                commands[name][clients] = got["tps"] * per
                rows.append(
                    [name, clients, got["tps"], got["tps"] * per, got["latency_ms"], got["failed"]]
                )
                print(rows[-1], flush=True)
        report.markdown.append(
            "The pgbench script of a start and a decision (one line per round trip; "
            "values elided past 300 characters):\n\n```\n"
            + "\n".join(
                line if len(line) <= 300 else line[:300] + " …"
                for line in files["start then decision"][0].splitlines()
            )
            + "\n```"
        )
    # The raw ceiling: pgbench's TPC-B, in pgbench's own tables of this database.
    subprocess.run(
        ["pgbench", "-i", "-q", "-s", str(args.scale), *_conn_args(url)],
        capture_output=True,
        text=True,
        check=True,
    )
    tpcb: dict[int, float] = {}
    for clients in CLIENTS:
        got = pgbench(
            url, ["-n", "-c", str(clients), "-j", str(min(clients, 2)), "-T", str(args.seconds)]
        )
        tpcb[clients] = got["tps"]
        rows.append(["TPC-B (pgbench's own)", clients, got["tps"], "-", got["latency_ms"], "-"])
    with connection.cursor() as cursor:
        for table in ("pgbench_accounts", "pgbench_branches", "pgbench_history", "pgbench_tellers"):
            cursor.execute(f"DROP TABLE IF EXISTS {table}")
    report.table(
        f"pgbench, {args.seconds} s per run, simple protocol, one round trip per line",
        ["script", "clients", "transactions/s", "commands/s", "latency avg ms", "failed"],
        rows,
    )
    for name, rates in commands.items():
        at = saturation(rates)
        report.note(
            f"{name}: saturates at {at} client(s), {rates[at]:,.0f} commands/s"
            f" (best {max(rates.values()):,.0f} commands/s)"
        )
    at = saturation(tpcb)
    report.note(f"TPC-B: saturates at {at} client(s), {tpcb[at]:,.0f} transactions/s")
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py pgbench_writes`. pgbench, PostgreSQL "
        "and anything else running share the machine's 2 cores."
    )
    report.write()


def _conn_args(url: str) -> list[str]:
    parts = urllib.parse.urlsplit(url)
    return [
        "-h", parts.hostname or "127.0.0.1",
        "-p", str(parts.port or 5432),
        "-U", parts.username or "postgres",
        parts.path.lstrip("/"),
    ]  # fmt: skip


if __name__ == "__main__":
    main()
