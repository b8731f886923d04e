"""An approver is deactivated while deciding: each of their open tasks is either decided
by them (the decision recorded, no move) or moved to their manager exactly once (the
decision refused), never both, and no task stays with them. Real threads on
PostgreSQL, the data committed before they start."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest

from approvals.models import PendingTask, User, WorkflowEvent
from approvals.services.directory import user_deactivate
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide
from templates_engine import CommandRejected

from ..directory.test_deactivate import memo_definition, start_memo
from .support import assert_history_intact, race

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 3
TASKS = 10
# The decisions are spread over the time the deactivation takes, so that some land
# before it reaches their workflow and some after; which do is up to the scheduler.
STAGGER_SECONDS = 0.015


def _decide(bob: User, wid: str, n: int, delay: float) -> str:
    time.sleep(delay)
    try:
        workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id=f"bob-{n}")
    except CommandRejected as exc:
        return exc.code
    return "recorded"


def _deactivate() -> str:
    olga = User.objects.get(username="olga")
    user_deactivate(user=User.objects.get(username="bob"), by=olga, reason="left")
    return "deactivated"


def test_a_decision_racing_the_deactivation_is_recorded_or_refused_never_both(acme: Any):
    workflow_template_publish(tenant=acme, definition=memo_definition({"manager": "submitter"}))
    for r in range(ROUNDS):
        # given bob holds TASKS open tasks and decides every one as he is deactivated
        User.objects.filter(username="bob").update(is_active=True)
        wids = [start_memo("alice", r * TASKS + n) for n in range(TASKS)]
        bob = User.objects.get(username="bob")  # signed in before the deactivation
        calls = [
            partial(_decide, bob, wid, r * TASKS + n, n * STAGGER_SECONDS)
            for n, wid in enumerate(wids)
        ]

        # when
        outcomes = race([_deactivate, *calls])

        # then
        assert outcomes[0] == "deactivated"
        assert not User.objects.get(username="bob").is_active
        for wid, outcome in zip(wids, outcomes[1:], strict=True):
            events = WorkflowEvent.objects.filter(workflow_id=wid)
            decided = events.filter(type="DecisionRecorded", payload__actor="bob").count()
            moved = events.filter(
                type="TaskReassigned", payload__from_user="bob", payload__to_user="victor"
            ).count()
            if outcome == "recorded":
                assert (decided, moved) == (1, 0), wid
            else:
                assert outcome == "NOT_YOUR_STEP", outcome
                assert (decided, moved) == (0, 1), wid
                assert PendingTask.objects.filter(
                    workflow_id=wid, assignee__username="victor"
                ).exists()
            assert_history_intact(wid)
        assert not PendingTask.objects.filter(assignee__username="bob").exists()
