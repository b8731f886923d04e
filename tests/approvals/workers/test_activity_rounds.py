"""A send-back that re-enters an action step runs it again as a new round: its own
outbox row and idempotency key, and each completed round undone once, newest first."""

from __future__ import annotations

import pytest

from approvals.models import ActivityAttempt, User, Workflow
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide, workflow_start
from approvals.workers.activities import attempt_run

pytestmark = pytest.mark.django_db

BUDGET = {
    "key": "budget-check",
    "steps": [
        {"id": "manager", "kind": "approval", "approvers": [{"user": "bob"}]},
        {
            "id": "reserve",
            "kind": "action",
            "activity": "reserve_budget",
            "compensate": {"activity": "release_budget"},
        },
        {
            "id": "finance",
            "kind": "approval",
            "approvers": [{"user": "farah"}],
            "send_back_to": "manager",
        },
    ],
}


def _run_due(wid: str) -> None:
    for attempt in ActivityAttempt.objects.filter(workflow_id=wid, finished_at__isnull=True):
        attempt_run(attempt_id=attempt.pk)


def test_a_sent_back_action_runs_as_a_new_round_and_each_round_is_undone_once(acme):
    workflow_template_publish(tenant=acme, definition=BUDGET)
    alice, bob, farah = (User.objects.get(username=u) for u in ("alice", "bob", "farah"))
    wid = str(
        workflow_start(
            submitter=alice,
            template_key="budget-check",
            subject_type="budget",
            subject_id="B-1",
            data={},
        ).workflow_id
    )

    # round 1: bob approves, the budget is reserved, farah sends it back to bob
    workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="b-1")
    _run_due(wid)
    workflow_decide(
        user=farah,
        workflow_id=wid,
        decision="send_back",
        request_id="f-1",
        comment="which project?",
    )
    # round 2: bob approves again, the budget is reserved again, farah rejects
    workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="b-2")
    _run_due(wid)
    workflow_decide(
        user=farah, workflow_id=wid, decision="reject", request_id="f-2", comment="over budget"
    )
    _run_due(wid)
    _run_due(wid)

    keys = list(
        ActivityAttempt.objects.filter(workflow_id=wid)
        .order_by("pk")
        .values_list("idempotency_key", "round", "outcome")
    )
    assert keys == [
        (f"{wid}/reserve", 1, "ok"),
        (f"{wid}/reserve/2", 2, "ok"),
        (f"{wid}/undo:reserve/2", 2, "ok"),
        (f"{wid}/undo:reserve", 1, "ok"),
    ]
    assert Workflow.objects.get(pk=wid).status == "REJECTED"
