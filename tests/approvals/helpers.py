"""Helpers for the app's tests: starting demo workflows through the API."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

EXPENSE = "expense-approval"
# A template whose one step reminds its approver (the submitter's manager) an hour on.
REMINDING = {
    "key": "reminding",
    "steps": [
        {
            "id": "manager",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
            "reminders": ["PT1H"],
        }
    ],
}


def start_expense(
    client: Any, amount: int, *, key: str | None = None, subject: str | None = None, **data: Any
) -> Any:
    """Start an expense; without a ``subject`` each start is for an expense of its own
    (the template's start policy refuses a second running one for the same subject),
    but repeats of one Idempotency-Key ``key`` send one body."""
    subject = subject or (f"E-{key}" if key else f"E-{uuid.uuid4().hex[:12]}")
    body = {
        "template": EXPENSE,
        "subject": {"type": "expense", "id": subject},
        "data": {"amountPaise": amount, "currency": "INR", "department": "eng", **data},
    }
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post("/api/workflows", body, format="json", **headers)


# A rejection or a send-back needs a reason (unless its step relaxes that): the tests
# that are not about the reason give this one.
REASON = "Please look again."


def decide(client: Any, workflow_id: str, decision: str, request_id: str, **extra: Any) -> Any:
    """POST a decision; a rejection or a send-back carries ``REASON`` unless ``comment``
    is given (an empty one to test the refusal)."""
    if decision in ("reject", "send_back"):
        extra.setdefault("comment", REASON)
    body = {"decision": decision, "requestId": request_id, **extra}
    return client.post(f"/api/workflows/{workflow_id}/decisions", body, format="json")


def run_activities(workflow_id: str) -> None:
    """Run, once each, the activity attempts of ``workflow_id`` not finished yet, as a
    worker would (an undo scheduled by one of them waits for the next call)."""
    from approvals.models import ActivityAttempt
    from approvals.workers.activities import attempt_run

    for attempt in ActivityAttempt.objects.filter(
        workflow_id=workflow_id, finished_at__isnull=True
    ):
        attempt_run(attempt_id=attempt.pk)


def second_organisation() -> tuple[Any, Any]:
    """Globex beside the demo's Acme: gina, and a vendor onboarding she started (it
    waits for a signal). Returns (the tenant, the workflow's StartResult)."""
    from approvals.models import Tenant, User
    from approvals.services.templates import workflow_template_publish
    from approvals.services.workflows import workflow_start

    globex = Tenant.objects.create(slug="globex", name="Globex")
    gina = User.objects.create_user("gina", password="pw", tenant=globex)
    workflow_template_publish(
        tenant=globex,
        definition={
            "key": "vendor-onboarding",
            "steps": [{"id": "contract", "kind": "signal", "signal": "contract_signed"}],
        },
    )
    started = workflow_start(
        submitter=gina,
        template_key="vendor-onboarding",
        subject_type="vendor",
        subject_id="V-1",
        data={},
    )
    return globex, started


@contextlib.contextmanager
def fast_retries() -> Iterator[None]:
    """Publish retry policies under a second apart, for tests only: the real minimum
    (``retry.MIN_INITIAL_INTERVAL``) keeps a storm of retries from being published."""
    from templates_engine import retry

    before = retry.MIN_INITIAL_INTERVAL
    retry.MIN_INITIAL_INTERVAL = 0.0
    try:
        yield
    finally:
        retry.MIN_INITIAL_INTERVAL = before


def inbox_counters() -> dict[str, int]:
    """Each person's open tasks as the inbox's counters say (``approvals_inboxversion``),
    by username, the zeros left out."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT u.username, v.open_tasks FROM approvals_inboxversion v"
            " JOIN approvals_user u ON u.id = v.person_id WHERE v.open_tasks <> 0"
        )
        return dict(cur.fetchall())


def open_tasks_counted() -> dict[str, int]:
    """Each person's open tasks counted from the task rows, by username."""
    from approvals.models import PendingTask

    counts: dict[str, int] = {}
    for username in PendingTask.objects.values_list("assignee__username", flat=True):
        counts[username] = counts.get(username, 0) + 1
    return counts
