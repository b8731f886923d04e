"""Histories for the audit tests: real ones through the API, and bulk ones (rows
inserted directly, hashes chained as the command path chains them) for volume; and what
a database superuser does to them (triggers off, hashes recomputed)."""

from __future__ import annotations

import datetime as dt
import io
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.core.management import CommandError, call_command
from django.db import connection

from approvals import clock
from approvals.audit import daily_seal
from approvals.models import (
    Tenant,
    User,
    Workflow,
    WorkflowEvent,
    WorkflowTemplate,
    history_month,
)
from approvals.runtime.chain import (
    HASH_V2,
    EventRow,
    event_hash_v1,
    event_hash_v2,
    stored_event_hash,
)

from ..helpers import EXPENSE, decide, start_expense

BULK_SUBJECT = "bulk"
# The margin kept clear on either side of the daily seal's settling after midnight UTC.
_NEAR_MIDNIGHT = dt.timedelta(minutes=10)


@contextmanager
def clear_of_midnight() -> Iterator[None]:
    """The clock moved on to a few minutes past the daily seal's delay after midnight
    UTC when it stands within that delay, or a few minutes before midnight: a test that
    makes "yesterday" and seals it then finds yesterday over, and no day ends while it
    runs, whatever the hour the suite runs at."""
    now = clock.now().astimezone(dt.UTC)
    midnight = dt.datetime.combine(now.date(), dt.time(0), tzinfo=dt.UTC)
    settled = daily_seal.delay() + _NEAR_MIDNIGHT
    if now < midnight + settled:
        shift = midnight + settled - now
    elif now > midnight + dt.timedelta(days=1) - _NEAR_MIDNIGHT:
        shift = midnight + dt.timedelta(days=1) + settled - now
    else:
        shift = dt.timedelta(0)
    with clock.shifted(shift):
        yield


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
                prev = event_hash_v2(row, tenant_id=tenant.pk, schema_version=1, result=None)
                stored_format: int | None = HASH_V2
            else:
                prev = event_hash_v1(row)
                stored_format = None
            rows.append(
                WorkflowEvent(
                    tenant=tenant,
                    hash=prev,
                    hash_format=stored_format,
                    history_month=history_month(wf.created_at),
                    **row._asdict(),
                )
            )
        WorkflowEvent.objects.bulk_create(rows, batch_size=2000)
        Workflow.objects.filter(pk=wf.pk).update(version=events_each, last_hash=prev)
        made += len(rows)
    return made


_TRIGGERS = {
    "approvals_workflowevent": "approvals_workflowevent_append_only",
    "approvals_chainseal": "approvals_chainseal_append_only",
}


@contextmanager
def triggers_off() -> Iterator[None]:
    """As a database superuser would: switch the append-only triggers off, then on."""

    def switch(state: str) -> None:
        with connection.cursor() as c:
            # The test's transaction holds deferred foreign-key checks: run them first.
            c.execute("SET CONSTRAINTS ALL IMMEDIATE")
            for table, trigger in _TRIGGERS.items():
                c.execute(f"ALTER TABLE {table} {state} TRIGGER {trigger}")

    switch("DISABLE")
    try:
        yield
    finally:
        switch("ENABLE")


def verify(*args: str) -> tuple[str, bool]:
    out = io.StringIO()
    try:
        call_command("verify_audit", *args, stdout=out)
    except CommandError:
        return out.getvalue(), False
    return out.getvalue(), True


def rechain(workflow_id: str) -> None:
    """Recompute every hash, each in its event's format, and the workflow's version and
    last_hash from the events left: a careful forger's finishing touch."""
    prev = ""
    events = list(WorkflowEvent.objects.filter(workflow_id=workflow_id).order_by("seq"))
    with triggers_off(), connection.cursor() as c:
        for event in events:
            row = EventRow(*(getattr(event, f) for f in EventRow._fields))._replace(prev_hash=prev)
            hashed = stored_event_hash(
                row,
                hash_format=event.hash_format,
                tenant_id=event.tenant_id,
                schema_version=event.schema_version,
                result=event.result,
                recorded=event.recorded,
            )
            assert hashed is not None
            prev = hashed
            c.execute(
                "UPDATE approvals_workflowevent SET prev_hash = %s, hash = %s WHERE id = %s",
                [row.prev_hash, prev, event.pk],
            )
        c.execute(
            "UPDATE approvals_workflow SET last_hash = %s, version = %s WHERE id = %s",
            [prev, len(events), workflow_id],
        )
