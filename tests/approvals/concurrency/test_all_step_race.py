"""An ``all`` step decided concurrently: the purchase-request ``review`` step for IT
hardware needs alice's manager (bob) and an IT admin (ivan)."""

from __future__ import annotations

from functools import partial

import pytest

from approvals.models import PendingTask, User, WorkflowEvent
from approvals.services.workflows import workflow_start

from .support import assert_history_intact, race

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 15


def _start_it_purchase(n: int) -> str:
    return str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="purchase-request",
            subject_type="purchase",
            subject_id=f"P-{n}",
            data={
                "amountPaise": 12_000_000,
                "currency": "INR",
                "category": "IT_HARDWARE",
                "item": "Laptop",
            },
        ).workflow_id
    )


def _decisions(wid: str) -> list[tuple[str, str | None]]:
    return list(
        WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
        .order_by("seq")
        .values_list("actor__username", "request_id")
    )


def test_both_approvers_deciding_at_once_are_both_recorded(http):
    # given
    bob, ivan = http("bob"), http("ivan")

    for n in range(ROUNDS):
        wid = _start_it_purchase(n)
        assert set(
            PendingTask.objects.filter(workflow_id=wid, step="review").values_list(
                "assignee__username", flat=True
            )
        ) == {"bob", "ivan"}

        # when bob and ivan approve at the same moment
        replies = race(
            [
                partial(bob.decide, wid, "approve", f"bob-{n}"),
                partial(ivan.decide, wid, "approve", f"ivan-{n}"),
            ]
        )

        # then both are recorded, once each, and the step completes on the second
        assert [r.status for r in replies] == [200, 200], replies
        first, second = sorted((r.body for r in replies), key=lambda b: b["version"])
        assert first["status"] == "PENDING_REVIEW"
        assert second["status"] == "RUNNING"  # on to the reserve_budget action
        assert not first["duplicate"] and not second["duplicate"]
        assert sorted(_decisions(wid)) == [("bob", f"bob-{n}"), ("ivan", f"ivan-{n}")]
        types = list(
            WorkflowEvent.objects.filter(workflow_id=wid)
            .order_by("seq")
            .values_list("type", flat=True)
        )
        decided = [i for i, t in enumerate(types) if t == "DecisionRecorded"]
        completed = types.index("StepCompleted", decided[0])
        assert completed > decided[1], types
        # the first reply's version is the seq just before the second decision
        assert first["version"] == decided[1]
        assert not PendingTask.objects.filter(workflow_id=wid, step="review").exists()
        assert_history_intact(wid)


def test_one_approver_approving_twice_at_once_counts_once(http):
    # given
    bob = http("bob")

    for n in range(ROUNDS):
        wid = _start_it_purchase(n)

        # when bob's approval arrives twice at once, under two request ids
        replies = race(
            [
                partial(bob.decide, wid, "approve", f"bob-{n}-a"),
                partial(bob.decide, wid, "approve", f"bob-{n}-b"),
            ]
        )

        # then one counts, the other is refused, and the step still waits for ivan
        ok = [r for r in replies if r.status == 200]
        refused = [r for r in replies if r.status != 200]
        assert len(ok) == 1 and len(refused) == 1, replies
        assert ok[0].body["status"] == "PENDING_REVIEW"
        assert refused[0].status == 409
        assert refused[0].body["error"]["code"] == "ALREADY_DECIDED"
        assert refused[0].body["error"]["message"] == "bob has already approved review"
        (recorded,) = _decisions(wid)
        assert recorded[0] == "bob"
        assert refused[0].body["error"]["requestId"] != recorded[1]
        assert list(
            PendingTask.objects.filter(workflow_id=wid, step="review").values_list(
                "assignee__username", flat=True
            )
        ) == ["ivan"]
        assert_history_intact(wid)
