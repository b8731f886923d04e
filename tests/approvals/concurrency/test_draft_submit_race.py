"""Submissions of one draft that arrive at once start one workflow."""

from __future__ import annotations

from functools import partial

import pytest

from approvals.models import Draft, StartRequest, Workflow

from .support import assert_history_intact, race

pytestmark = pytest.mark.django_db(transaction=True)

SUBMITS = 10
DRAFT = {
    "template": "expense-approval",
    "subject": {"type": "expense", "id": "E-draft-race"},
    "data": {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
}


def test_concurrent_submissions_of_one_draft_start_one_workflow(http):
    # given
    alice = http("alice")
    draft = alice.post("/api/drafts", DRAFT).body

    # when ten submissions of it arrive at once
    submit = partial(alice.post, f"/api/drafts/{draft['draftId']}/submit", {})
    replies = race([submit] * SUBMITS)

    # then every answer names the one workflow it started
    assert [r.status for r in replies] == [201] * SUBMITS, replies
    assert len({r.body["workflowId"] for r in replies}) == 1
    wf = Workflow.objects.get()
    assert StartRequest.objects.get().key == draft["idempotencyKey"]
    assert Draft.objects.get().workflow_id == wf.pk
    assert_history_intact(wf.pk)
