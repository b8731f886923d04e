"""The audit export at volume: 100,000 events streamed as CSV and as JSON Lines, with
the peak Python memory the export allocates (tracemalloc) and events per second.

    .venv/bin/python bench/audit_export.py [--events 100000] [--reset]

The events are plain SQL rows (generate_series) under one tenant's workflows, filled
once and kept; ``--reset`` cannot remove them (the events table is append-only), so the
fill uses its own subject type and is skipped when already there.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, setup_django  # noqa: E402

SUBJECT_TYPE = "bench-audit"
EVENTS_PER_WORKFLOW = 50


def fill(cur: object, *, tenant_id: int, template_id: int, version: int, events: int) -> None:
    c = cur
    workflows = events // EVENTS_PER_WORKFLOW
    c.execute("SET LOCAL session_replication_role = replica")  # type: ignore[attr-defined]
    c.execute(  # type: ignore[attr-defined]
        """
        INSERT INTO approvals_workflow (id, template_key, template_version, subject_type,
            subject_id, data, status, public_status, current_step, version, snapshot,
            last_hash, created_at, updated_at, submitter_id, tenant_id, template_id)
        SELECT gen_random_uuid(), 'expense-approval', %(version)s, %(subject)s, g::text,
            '{}'::jsonb, 'RUNNING', 'PENDING_MANAGER', 'manager', %(per)s, '{}'::jsonb,
            md5(g::text) || md5(g::text), now(), now(), NULL, %(tenant)s, %(template)s
        FROM generate_series(1, %(n)s) g
        """,
        {
            "version": version,
            "subject": SUBJECT_TYPE,
            "per": EVENTS_PER_WORKFLOW,
            "tenant": tenant_id,
            "template": template_id,
            "n": workflows,
        },
    )
    c.execute(  # type: ignore[attr-defined]
        """
        INSERT INTO approvals_workflowevent (tenant_id, workflow_id, seq, type, schema_version,
            payload, request_id, result, actor_id, role, on_behalf_of_id, created_at,
            prev_hash, hash, history_month)
        SELECT %(tenant)s, w.id, s, 'DecisionRecorded', 1,
            jsonb_build_object('step', 'manager', 'decision', 'approve',
                               'comment', 'looks fine ' || s),
            NULL, NULL, NULL, 'approver', NULL, now() - (s * interval '1 minute'),
            md5(w.id::text || (s - 1)) || md5((s - 1)::text),
            md5(w.id::text || s) || md5(s::text),
            date_trunc('month', w.created_at AT TIME ZONE 'UTC')::date
        FROM approvals_workflow w CROSS JOIN generate_series(1, %(per)s) s
        WHERE w.tenant_id = %(tenant)s AND w.subject_type = %(subject)s
        """,
        {"tenant": tenant_id, "subject": SUBJECT_TYPE, "per": EVENTS_PER_WORKFLOW},
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    args = ap.parse_args()

    setup_django()
    from _common import seed
    from django.db import connection, transaction

    from approvals.audit.export import ExportFilter, audit_export
    from approvals.models import WorkflowEvent, WorkflowTemplate

    org = seed()
    tenant = org["tenant"]
    template = WorkflowTemplate.objects.filter(tenant=tenant, key="expense-approval").first()
    assert template is not None
    have = WorkflowEvent.objects.filter(tenant=tenant, workflow__subject_type=SUBJECT_TYPE).count()
    if have < args.events:
        t = time.perf_counter()
        with transaction.atomic(), connection.cursor() as cur:
            fill(
                cur,
                tenant_id=tenant.pk,
                template_id=template.pk,
                version=template.version,
                events=args.events - have,
            )
        print(f"filled {args.events - have:,} events in {time.perf_counter() - t:.1f} s")
    total = WorkflowEvent.objects.filter(tenant=tenant).count()
    filters = ExportFilter()

    report = Report("audit_export", f"Audit export: {total:,} events streamed")
    rows = []
    for fmt in ("csv", "jsonl"):
        tracemalloc.start()
        t = time.perf_counter()
        count = 0
        size = 0
        for chunk in audit_export(tenant_id=tenant.pk, filters=filters, fmt=fmt):
            count += 1
            size += len(chunk)
        took = time.perf_counter() - t
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        events = count - (1 if fmt == "csv" else 0)
        rows.append([fmt, events, took, events / took, peak / 1024, size / 1024 / 1024])
    report.table(
        "Whole export, in-process (the generator the API, the admin and export_audit stream)",
        ["format", "events", "seconds", "events/s", "peak KiB (tracemalloc)", "MiB written"],
        rows,
    )
    report.note(
        "Peak is Python allocations while streaming (server-side cursor, "
        "APPROVALS_AUDIT_EXPORT_CHUNK rows per fetch): it does not grow with the event "
        "count; tests/approvals/audit/test_export.py checks 20,000 events stay under twice "
        "the peak of 5,000."
    )
    report.write()


if __name__ == "__main__":
    main()
