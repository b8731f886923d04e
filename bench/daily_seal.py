"""Daily seals: the seal job's cost and rows per organisation-day, a workflow's proof
and the check of one workflow against its day's seal, for organisations of 10,000 and
100,000 workflows (PostgreSQL).

    .venv/bin/python bench/daily_seal.py                       # quick: 10,000
    .venv/bin/python bench/daily_seal.py --workflows 10000 100000

Each size is an organisation of its own (``sealbench-<n>``), filled once with ``n``
workflows of one chained event each, written a year back (rows inserted directly,
hashed as the command path hashes them; not timed), and reused by later runs. Each run
seals the next unsealed day of it (``daily_seal_create``: reads every head, builds the
Merkle root, writes one row), then times the proof of one workflow
(``inclusion_proof``), checking that proof (``Proof.leads_to``, what the offline
verifier does), ``verify_audit --workflow`` (the workflow's chain and its inclusion),
and recomputing the day's root from the events (what ``verify_audit`` does per day over
a whole organisation). CPU is this process's (``time.process_time``); PostgreSQL's
share is the wall time less it, roughly.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BENCH_SEAL_KEY, Report, ensure_bench_db, setup_django  # noqa: E402

_BATCH = 5000


def _fill(tenant: Any, template: Any, submitter: Any, n: int, at: dt.datetime) -> None:
    from approvals.models import Workflow, WorkflowEvent, history_month
    from approvals.runtime.chain import HASH_V2, EventRow, event_hash_v2

    have = Workflow.objects.filter(tenant=tenant).count()
    month = history_month(at)
    for start in range(have, n, _BATCH):
        workflows, events = [], []
        for i in range(start, min(n, start + _BATCH)):
            wid = uuid.uuid4()
            row = EventRow(
                workflow_id=wid,
                seq=1,
                type="WorkflowStarted",
                payload={"data": {"amountPaise": 4_500_000}, "by": submitter.username},
                request_id=None,
                actor_id=submitter.pk,
                role="submitter",
                on_behalf_of_id=None,
                created_at=at,
                prev_hash="",
            )
            head = event_hash_v2(row, tenant_id=tenant.pk, schema_version=1, result=None)
            workflows.append(
                Workflow(
                    id=wid,
                    tenant=tenant,
                    template=template,
                    template_key=template.key,
                    template_version=template.version,
                    subject_type="seal-bench",
                    subject_id=f"S-{i}",
                    submitter=submitter,
                    version=1,
                    last_hash=head,
                    created_at=at,
                    updated_at=at,
                )
            )
            events.append(
                WorkflowEvent(
                    tenant=tenant,
                    hash=head,
                    hash_format=HASH_V2,
                    history_month=month,
                    **row._asdict(),
                )
            )
        Workflow.objects.bulk_create(workflows, batch_size=_BATCH)
        WorkflowEvent.objects.bulk_create(events, batch_size=_BATCH)
        # auto_now and auto_now_add set the times to now: put them back a year
        Workflow.objects.filter(pk__in=[w.pk for w in workflows]).update(
            created_at=at, updated_at=at
        )


def _timed(fn: Any, **kwargs: Any) -> tuple[Any, float, float, int]:
    """(result, wall s, this process's CPU s, queries)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn(**kwargs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return result, wall, cpu, len(queries)


def _plan(tenant_id: int, day: dt.date) -> str:
    from django.db import connection

    from approvals.audit.daily_proof import _leaves_sql, day_end

    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN " + _leaves_sql(exact=False), {"tenant": tenant_id, "end": day_end(day)}
        )
        return "\n".join(r[0] for r in cursor.fetchall())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workflows", type=int, nargs="+", default=[10_000])
    args = ap.parse_args()
    os.environ.setdefault("APPROVALS_AUDIT_SEAL_KEY", BENCH_SEAL_KEY)
    ensure_bench_db()
    setup_django()
    from _common import seed

    from approvals import clock
    from approvals.audit.daily_proof import day_root, inclusion_proof
    from approvals.audit.daily_seal import daily_seal_create
    from approvals.audit.models import DailySeal
    from approvals.audit.seal import seal_create
    from approvals.audit.verify import audit_verify
    from approvals.models import Tenant, Workflow, WorkflowTemplate

    people = seed()
    template = WorkflowTemplate.objects.filter(tenant=people["tenant"]).order_by("pk").first()
    assert template is not None
    alice = people["alice"]
    first_day = (clock.now() - dt.timedelta(days=400)).date()
    at = dt.datetime.combine(first_day, dt.time(12), tzinfo=dt.UTC)
    rows: list[list[Any]] = []
    plans: list[str] = []
    for n in args.workflows:
        tenant, _ = Tenant.objects.get_or_create(
            slug=f"sealbench-{n}", defaults={"name": f"Seal bench {n}"}
        )
        t = time.perf_counter()
        _fill(tenant, template, alice, n, at)
        seal_create(tenant=tenant, only_changed=True)  # the ten-minute seal, not timed
        fill_s = time.perf_counter() - t
        sealed = DailySeal.objects.filter(tenant=tenant).count()
        day = first_day + dt.timedelta(days=sealed)
        seal, seal_wall, seal_cpu, seal_q = _timed(daily_seal_create, tenant=tenant, day=day)
        assert seal is not None and seal.count == n, (seal, n)
        rows_per_day = DailySeal.objects.filter(tenant=tenant, day=day).count()
        wid = (
            Workflow.objects.filter(tenant=tenant)
            .order_by("pk")
            .values_list("pk", flat=True)[n // 2]
        )
        proof, proof_wall, proof_cpu, _ = _timed(
            inclusion_proof, tenant=tenant, workflow_id=wid, day=day
        )
        assert proof is not None
        size = len(json.dumps(proof.as_dict(), separators=(",", ":")))
        t = time.perf_counter()
        for _ in range(1000):
            assert proof.leads_to(seal.root, seal.count)
        check_us = (time.perf_counter() - t) * 1000
        (breaks, _), one_wall, one_cpu, one_q = _timed(audit_verify, tenant=tenant, workflow_id=wid)
        assert breaks == [], breaks
        (count, root), root_wall, root_cpu, _ = _timed(
            day_root, tenant_id=tenant.pk, day=day, exact=True
        )
        assert (count, root) == (seal.count, seal.root)
        rows.append(
            [
                n,
                seal_wall,
                seal_cpu,
                seal_q,
                rows_per_day,
                proof_wall,
                len(proof.path),
                size,
                check_us,
                one_wall,
                one_cpu,
                one_q,
                root_wall,
            ]
        )
        plans.append(f"{n:,} workflows:\n\n```\n{_plan(tenant.pk, day)}\n```")
        print(f"{n}: filled in {fill_s:.0f} s (not timed)", flush=True)
    report = Report("daily_seal", "Daily seals: the seal job, a proof, one workflow checked")
    report.table(
        "One organisation's daily seal, by its number of workflows (one event each)",
        [
            "workflows",
            "seal s (wall)",
            "seal s (app CPU)",
            "seal queries",
            "rows written",
            "proof s",
            "path hashes",
            "proof bytes (JSON)",
            "check proof µs",
            "verify --workflow s",
            "verify --workflow CPU s",
            "verify --workflow queries",
            "day's root from events s",
        ],
        rows,
    )
    report.note(
        "One row per organisation per day, whatever the number of workflows; the proof "
        "grows with log2(workflows). Sealing reads each head once (workflows updated after "
        "the day's end are looked up in their own partition); recomputing a day from the "
        "events (what verify_audit does per sealed day over a whole organisation) reads "
        "each workflow's last event before the day's end."
    )
    report.markdown.append(
        "The plan of the seal's read of the heads (EXPLAIN, no ANALYZE):\n\n" + "\n\n".join(plans)
    )
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py daily_seal` (this section, 10,000 "
        "workflows), or `.venv/bin/python bench/daily_seal.py --workflows 10000 100000`."
    )
    report.write()


if __name__ == "__main__":
    main()
