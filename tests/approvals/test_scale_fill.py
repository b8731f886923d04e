"""The history generator of the scale benchmark (bench/scale_fill.py) on a small scale:
its events verify as the command path's do, its read models are the ones a rebuild
makes, its events sit in their month's partition, and it refuses a second fill."""

from __future__ import annotations

import datetime as dt
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from approvals import clock
from approvals.audit.daily_seal import last_sealable_day
from approvals.audit.models import DailySeal
from approvals.audit.verify import audit_verify
from approvals.models import PendingTask, StepVisit, Tenant, Workflow, WorkflowEvent
from approvals.runtime.partitions import partition_name
from approvals.runtime.rebuild import read_models_check, read_models_of, read_models_rebuild
from approvals.runtime.rollup import rollup_rows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scale_fill  # noqa: E402

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
]


@override_settings(APPROVALS_AUDIT_SEAL_KEY="test-only-seal-key")
def test_a_small_fill_verifies_rebuilds_alike_uses_the_partitions_and_is_not_repeated() -> None:
    report = scale_fill.fill(events=2_000, tenants=2, months=3, procs=1, log=lambda _: None)

    assert report.events >= 2_000
    assert WorkflowEvent.objects.count() == report.events
    statuses = set(Workflow.objects.values_list("status", flat=True))
    assert {"COMPLETED", "RUNNING"} <= statuses, statuses
    assert statuses & {"REJECTED", "CANCELLED", "ROLLED_BACK"}, statuses
    types = set(WorkflowEvent.objects.values_list("type", flat=True))
    assert {"SentBack", "Resubmitted", "ReminderSent", "ActivityFailed"} <= types, types
    assert PendingTask.objects.exists(), "running workflows have their inbox rows"

    # The chains and seals verify as a live history's do.
    breaks, checked = audit_verify()
    assert breaks == [], breaks[:5]
    assert checked == Workflow.objects.count()
    # One daily seal per organisation per day of its history that is over, in order,
    # each chained to the day before, and verify_audit (every day's root) finds nothing.
    last = last_sealable_day(clock.now())
    for tenant in Tenant.objects.filter(slug__startswith="scale-"):
        first = Workflow.objects.filter(tenant=tenant).earliest("created_at").created_at
        days = list(DailySeal.objects.filter(tenant=tenant).order_by("day"))
        assert [d.day for d in days] == [
            first.astimezone(dt.UTC).date() + dt.timedelta(days=n)
            for n in range((last - first.astimezone(dt.UTC).date()).days + 1)
        ]
        assert [d.prev_signature for d in days] == ["", *(d.signature for d in days[:-1])]
    assert DailySeal.objects.count() > 2 * 80  # three months of two organisations
    out = io.StringIO()
    call_command("verify_audit", "--all-days", stdout=out)
    assert "daily seal(s) checked and their roots recomputed" in out.getvalue()

    # Every event sits in the partition of its workflow's month; none in the default.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text, history_month, count(*)"
            " FROM approvals_workflowevent GROUP BY 1, 2"
        )
        placed = cursor.fetchall()
    assert len(placed) >= 3, placed
    for table, month, _ in placed:
        assert table == partition_name(month), (table, month)

    # The read models are those a rebuild derives from the events.
    scale = Tenant.objects.filter(slug__startswith="scale-").order_by("pk")
    assert read_models_check() == []
    before = read_models_of()
    rollups = {t.pk: rollup_rows(tenant_id=t.pk) for t in scale}
    assert StepVisit.objects.exists() and all(rollups.values())
    read_models_rebuild()
    assert read_models_of() == before
    assert {t.pk: rollup_rows(tenant_id=t.pk) for t in scale} == rollups

    # A resumed fill has no day left to seal either.
    assert scale_fill.daily_seals(log=lambda _: None) == 0

    with pytest.raises(scale_fill.AlreadyFilled, match="already holds workflow events"):
        scale_fill.fill(events=2_000, tenants=2, months=3, procs=1, log=lambda _: None)
    # Resumed, a fill that is whole writes nothing more.
    again = scale_fill.fill(
        events=2_000, tenants=2, months=3, procs=1, log=lambda _: None, resume=True
    )
    assert again.written == 0 and again.events == report.events


def test_a_fill_refuses_a_database_with_any_history(acme: Any) -> None:
    from approvals.models import User
    from approvals.services.workflows import workflow_start

    workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-1",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    with pytest.raises(scale_fill.AlreadyFilled):
        scale_fill.fill(events=100, tenants=1, procs=1, log=lambda _: None)
    with pytest.raises(scale_fill.AlreadyFilled, match="Nothing to resume"):
        scale_fill.fill(events=100, tenants=1, procs=1, log=lambda _: None, resume=True)
    assert not Tenant.objects.filter(slug__startswith="scale-").exists()
    assert not DailySeal.objects.exists()
