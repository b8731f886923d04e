"""Offline verification of an audit export: events per second that
``python -m approvals.audit.offline_verify`` checks in a 1,000,000-event JSON Lines file.

    .venv/bin/python bench/offline_verify.py [--events 1000000] [--per-workflow 10]

Building a million real events through the command path would take this machine most
of an hour, so the file is written directly in the export's JSON Lines format
(``approvals.audit.export.JSONL_FIELDS``): every field the export writes, payloads
shaped like the engine's decision events, every hash computed in the current hash
format and chained, each workflow's recorded head at the end of its history. The
verifier cannot tell it from a real export; it reports no problem (checked here).
Then the verifier runs as an auditor runs it: in one process, and in one per CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, Report  # noqa: E402

from approvals.audit import offline_verify  # noqa: E402  (standard library only)

TARGET = 50_000  # events per second (issue 22)
STEPS = ("manager", "vp", "finance")


def _event(wid: str, seq: int, prev: str, per: int, version_hash: str | None) -> dict[str, Any]:
    step = STEPS[(seq - 1) % len(STEPS)]
    payload: dict[str, Any]
    if seq == 1:
        etype = "WorkflowStarted"
        payload = {
            "type": etype,
            "data": {"amountPaise": 4_500_000 + seq, "currency": "INR", "department": "eng"},
            "submitter": "alice",
        }
    else:
        etype = "DecisionRecorded"
        payload = {
            "type": etype,
            "step": step,
            "decision": "approve",
            "actor": "bob",
            "comment": f"looks fine {seq}",
            "at": 1_780_000_000 + seq,
        }
    row = {
        "workflow_id": wid,
        "seq": seq,
        "type": etype,
        "role": "approver",
        "prev_hash": prev,
        "hash": "",
        "tenant_id": 1,
        "created_at": f"2026-12-02T09:15:{seq % 60:02d}.123456+00:00",
        "payload": payload,
        "request_id": f"req-{wid[:8]}-{seq}",
        "actor_id": 4,
        "on_behalf_of_id": None,
        "schema_version": 1,
        "result": None,
        "recorded": {
            "actor": "bob",
            "actor_name": "Bob Rao",
            "status": "PENDING_VP" if seq < per else "APPROVED",
            "template_key": "expense-approval",
            "template_version": 3,
            "subject_type": "expense",
            "subject_id": f"E-{wid[:8]}",
        },
        "hash_format": offline_verify.HASH_V3,
        "workflow_version": per,
        "workflow_last_hash": version_hash,
    }
    row.update(offline_verify.shown_columns(row))
    return row


def write_export(path: Path, *, events: int, per: int) -> float:
    """Write ``events`` events (``per`` per workflow) to ``path``; the seconds it took."""
    t0 = time.perf_counter()
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    with path.open("w", encoding="utf-8") as out:
        for _ in range(events // per):
            wid = str(uuid.uuid4())
            rows = []
            prev = ""
            for seq in range(1, per + 1):
                row = _event(wid, seq, prev, per, None)
                row["hash"] = prev = offline_verify.event_hash(row) or ""
                rows.append(row)
            for row in rows:
                row["workflow_last_hash"] = prev
                out.write(dumps(row) + "\n")
    return time.perf_counter() - t0


def run_verifier(path: Path, jobs: int) -> tuple[float, str]:
    """The verifier as an auditor runs it, in its own process: (seconds, its last line)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "approvals.audit.offline_verify", str(path), "--jobs", str(jobs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t0
    last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    if proc.returncode != 0:
        raise SystemExit(f"the verifier found problems in a valid export: {last}")
    return took, last


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--per-workflow", type=int, default=10)
    args = parser.parse_args()
    events = args.events - args.events % args.per_workflow
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.jsonl"
        write_s = write_export(path, events=events, per=args.per_workflow)
        size_mib = path.stat().st_size / 2**20
        print(f"wrote {events:,} events ({size_mib:,.0f} MiB) in {write_s:.1f} s", flush=True)
        rows = []
        for jobs in sorted({1, cpus}):
            took, last = run_verifier(path, jobs)
            rate = events / took
            rows.append([jobs, events, took, rate, "yes" if rate >= TARGET else "no"])
            print(f"jobs={jobs}: {took:.1f} s, {rate:,.0f} events/s: {last}", flush=True)
    report = Report("offline_verify", f"Offline verification of a {events:,}-event audit export")
    report.table(
        f"python -m approvals.audit.offline_verify on a {size_mib:,.0f} MiB JSON Lines export "
        f"({args.per_workflow} events per workflow), target {TARGET:,} events/s",
        ["processes", "events", "seconds", "events/s", f"≥ {TARGET:,}/s"],
        rows,
    )
    report.note(
        "The export is written directly in the JSON Lines format the export produces "
        "(every field, hash format 2, chained, each workflow's recorded head), not "
        f"exported from the database: a million real events would take far longer to "
        f"build than the check. Writing it took {write_s:.0f} s."
    )
    report.note(
        "Seconds are the whole command, as an auditor runs it: Python's start, reading "
        "the file, recomputing every SHA-256 over the canonical JSON, and walking the "
        "chains; no seal key (no seals in the file)."
    )
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py offline_verify` (this section), or "
        "`.venv/bin/python bench/offline_verify.py --events 1000000` alone."
    )
    report.write()


if __name__ == "__main__":
    main()
