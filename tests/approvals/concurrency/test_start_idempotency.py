"""Concurrent starts that carry one Idempotency-Key create one workflow."""

from __future__ import annotations

from functools import partial

import pytest

from approvals.models import StartRequest, Workflow

from .support import assert_history_intact, race

pytestmark = pytest.mark.django_db(transaction=True)

STARTS = 20
BODY = {
    "template": "expense-approval",
    "subject": {"type": "expense", "id": "E-race"},
    "data": {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
}


@pytest.mark.parametrize("round_", range(5))
def test_concurrent_starts_with_one_key_create_one_workflow(http, round_):
    # given
    alice = http("alice")
    key = f"start-race-{round_}"

    # when 20 identical starts arrive at once
    start = partial(alice.post, "/api/workflows", BODY, **{"Idempotency-Key": key})
    replies = race([start] * STARTS)

    # then every reply is the same workflow, and there is one of it
    assert [r.status for r in replies] == [201] * STARTS, replies
    ids = {r.body["workflowId"] for r in replies}
    assert len(ids) == 1
    assert {(r.body["status"], r.body["version"]) for r in replies} == {
        ("PENDING_MANAGER", replies[0].body["version"])
    }
    assert Workflow.objects.count() == 1
    requests = StartRequest.objects.filter(key=key)
    assert requests.count() == 1
    assert str(requests.get().workflow_id) == ids.pop()
    assert_history_intact(Workflow.objects.get().pk)
