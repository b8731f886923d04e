"""The archiver: months per minute for a month of N events (PostgreSQL).

    .venv/bin/python bench/archive.py [--events 50000]

Fills one month about three years back with real workflows through the command path
(started, one decision, cancelled, under the shifted clock), the organisation's
retention set to one year so the month is due, then times ``archive_history``'s work
(``month_archive``: write the gzip JSON Lines and manifest to the filesystem store,
read both back and check every hash, chain, count and head, detach and drop the
partition), ``restore_archive`` (check the archive, insert the events back), and the
archiver again after the restore (the archive checks out against the live rows, so
nothing is written twice). The month is left archived in the bench database.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH_SEAL_KEY, Report, ensure_bench_db, setup_django  # noqa: E402


def _free_month(this_month: dt.date) -> dt.date:
    """A month far enough back with no workflows, partition or archive of its own."""
    from approvals.audit.models import ArchivedMonth
    from approvals.models import Workflow
    from approvals.runtime.partitions import history_partitions, month_add, partition_name

    partitions = set(history_partitions())
    for back in range(36, 600):
        month = month_add(this_month, -back)
        start = dt.datetime(month.year, month.month, 1, tzinfo=dt.UTC)
        if (
            partition_name(month) not in partitions
            and not ArchivedMonth.objects.filter(month=month).exists()
            and not Workflow.objects.filter(
                created_at__gte=start, created_at__lt=start + dt.timedelta(days=27)
            ).exists()
        ):
            return month
    raise SystemExit("no free month left in the bench database")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=50_000, help="events in the month")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="archive-bench-")
    os.environ["APPROVALS_ARCHIVE_ROOT"] = root
    os.environ.setdefault("APPROVALS_AUDIT_SEAL_KEY", BENCH_SEAL_KEY)
    ensure_bench_db()
    setup_django()
    from _common import seed

    from approvals import clock
    from approvals.audit.archive import month_archive
    from approvals.audit.restore import month_restore
    from approvals.audit.retention import retention_set
    from approvals.models import WorkflowEvent
    from approvals.runtime.partitions import history_partitions_ensure
    from approvals.services.workflows import workflow_cancel, workflow_decide, workflow_start

    people = seed()
    tenant, alice, bob = people["tenant"], people["alice"], people["bob"]
    retention_set(tenant=tenant, years=1, by="bench")
    now = clock.now()
    month = _free_month(now.date().replace(day=1))
    at = dt.datetime(month.year, month.month, 10, tzinfo=dt.UTC)
    t0 = time.perf_counter()
    events = workflows = 0
    with clock.shifted(at - now):
        history_partitions_ensure(months_ahead=0)
        while events < args.events:
            for _ in range(50):
                started = workflow_start(
                    submitter=alice,
                    template_key="expense-approval",
                    subject_type="archive-bench",
                    subject_id=f"A-{month:%Y%m}-{workflows}",
                    data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
                )
                wid = started.workflow_id
                workflow_decide(
                    user=bob, workflow_id=wid, decision="approve", request_id=f"ab-{wid}"
                )
                workflow_cancel(user=alice, workflow_id=wid, reason="bench", request_id=f"ac-{wid}")
                workflows += 1
            events = WorkflowEvent.objects.filter(history_month=month).count()
    fill_s = time.perf_counter() - t0
    print(f"{month:%Y-%m}: {events:,} events of {workflows:,} workflows in {fill_s:.0f} s")

    t = time.perf_counter()
    result = month_archive(month)
    archive_s = time.perf_counter() - t
    assert result.dropped and result.events == events
    t = time.perf_counter()
    restored = month_restore(month)
    restore_s = time.perf_counter() - t
    assert sum(restored.values()) == events
    t = time.perf_counter()
    again = month_archive(month)
    again_s = time.perf_counter() - t
    assert again.dropped and again.written == []
    size = sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())

    rows = [
        [
            "archive (write, read back, check, drop)",
            events,
            archive_s,
            60 / archive_s,
            events / archive_s,
        ],
        ["restore (check, insert)", events, restore_s, 60 / restore_s, events / restore_s],
        [
            "archive again after restore (checks, drops)",
            events,
            again_s,
            60 / again_s,
            events / again_s,
        ],
    ]
    report = Report("archive", "Archiver: months per minute")
    report.table(
        f"One month of {events:,} events ({workflows:,} workflows, one organisation), "
        "filesystem store",
        ["step", "events", "seconds", "months/minute", "events/s"],
        rows,
    )
    report.note(
        f"The archive holds {size / events:.0f} bytes per event (gzip JSON Lines and the "
        f"manifest, {size / 2**20:.1f} MiB). Filling the month through the command path "
        f"took {fill_s:.0f} s and is not timed."
    )
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py archive` (this section), or "
        "`.venv/bin/python bench/archive.py --events 100000` alone."
    )
    report.write()


if __name__ == "__main__":
    main()
