"""Histories for the audit tests: real ones through the API, and bulk ones (rows
inserted directly, hashes chained as the command path chains them) for volume."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from approvals.models import Tenant, User, Workflow, WorkflowEvent, WorkflowTemplate
from approvals.runtime.chain import HASH_V2, EventRow, event_hash, event_hash_v1

from ..helpers import EXPENSE, decide, start_expense

BULK_SUBJECT = "bulk"


def run_expenses(api: Any, n: int = 3, *, prefix: str = "E") -> list[str]:
    """``n`` expense workflows by alice, each approved by bob: several events each."""
    alice, bob = api("alice"), api("bob")
    ids = []
    for i in range(n):
        started = start_expense(alice, 4_500_000, subject=f"{prefix}-{i}")
        assert started.status_code == 201, started.content
        wid = started.json()["workflowId"]
        assert decide(bob, wid, "approve", f"{prefix}-bob-{i}").status_code == 200
        ids.append(wid)
    return ids


def bulk_history(
    tenant: Tenant,
    *,
    workflows: int,
    events_each: int,
    start: dt.datetime | None = None,
    hash_format: int = HASH_V2,
) -> int:
    """``workflows`` workflows of ``events_each`` chained events each, hashed in
    ``hash_format`` (format 1: as events were before format 2); returns the count."""
    template = WorkflowTemplate.objects.filter(tenant=tenant, key=EXPENSE).first()
    assert template is not None
    alice = User.objects.get(username="alice")
    at = start or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    made = 0
    for w in range(workflows):
        wf = Workflow.objects.create(
            id=uuid.uuid4(),
            tenant=tenant,
            template=template,
            template_key=EXPENSE,
            template_version=template.version,
            subject_type=BULK_SUBJECT,
            subject_id=f"B-{w}",
            submitter=alice,
        )
        rows = []
        prev = ""
        for seq in range(1, events_each + 1):
            row = EventRow(
                workflow_id=wf.pk,
                seq=seq,
                type="ReminderSent",
                payload={"step": "manager", "comment": f"note {seq} " + "x" * 60},
                request_id=None,
                actor_id=alice.pk,
                role="system",
                on_behalf_of_id=None,
                created_at=at + dt.timedelta(seconds=w * events_each + seq),
                prev_hash=prev,
            )
            if hash_format == HASH_V2:
                prev = event_hash(row, tenant_id=tenant.pk, schema_version=1, result=None)
                stored_format: int | None = HASH_V2
            else:
                prev = event_hash_v1(row)
                stored_format = None
            rows.append(
                WorkflowEvent(tenant=tenant, hash=prev, hash_format=stored_format, **row._asdict())
            )
        WorkflowEvent.objects.bulk_create(rows, batch_size=2000)
        Workflow.objects.filter(pk=wf.pk).update(version=events_each, last_hash=prev)
        made += len(rows)
    return made
