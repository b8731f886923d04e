"""Two assignees of an ``any`` step decide at the same moment, each with their own
request id: one decision is recorded, the other is refused with a clear 409."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from approvals.models import OrgGroup, PendingTask, User, WorkflowEvent
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start
from templates_engine.steps.approval import NOT_WAITING_FOR

from .support import assert_history_intact, race

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 30
PAIR = ("fiona", "ivan")


def _definition(key: str, *, sign_off: bool) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [
        {"id": "pair", "kind": "approval", "mode": "any", "approvers": [{"group": "pair"}]},
    ]
    if sign_off:
        steps.append({"id": "sign_off", "kind": "approval", "approvers": [{"user": "victor"}]})
    return {"key": key, "title": "Either of two approvers", "steps": steps}


@pytest.fixture
def pair(acme: Any) -> Any:
    group = OrgGroup.objects.create(tenant=acme, key="pair", name="Pair")
    group.members.add(*User.objects.filter(username__in=PAIR))
    return group


def _start(key: str, n: int) -> str:
    return str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key=key,
            subject_type="memo",
            subject_id=f"M-{n}",
            data={},
        ).workflow_id
    )


@pytest.mark.parametrize(
    ("sign_off", "refusal", "winner_status"),
    [(True, "NOT_YOUR_STEP", "PENDING_SIGN_OFF"), (False, "WORKFLOW_FINISHED", "APPROVED")],
    ids=["step-moves-on", "workflow-completes"],
)
def test_one_of_two_simultaneous_deciders_wins(acme, pair, http, sign_off, refusal, winner_status):
    # given
    key = "two-approvers" if sign_off else "one-of-two"
    workflow_template_publish(tenant=acme, definition=_definition(key, sign_off=sign_off))
    clients = {name: http(name) for name in PAIR}

    for n in range(ROUNDS):
        wid = _start(key, n)
        assert set(
            PendingTask.objects.filter(workflow_id=wid).values_list("assignee__username", flat=True)
        ) == set(PAIR)

        # when both approve at the same moment
        replies = race(
            [partial(clients[name].decide, wid, "approve", f"{name}-{n}") for name in PAIR]
        )

        # then exactly one decision is recorded
        by_name = dict(zip(PAIR, replies, strict=True))
        winners = [name for name, r in by_name.items() if r.status == 200]
        assert len(winners) == 1, by_name
        winner = winners[0]
        (loser,) = set(PAIR) - {winner}
        assert by_name[winner].body == {
            "status": winner_status,
            "version": by_name[winner].body["version"],
            "duplicate": False,
            "message": f"Approved Either of two approvers M-{n}.",
        }
        refused = by_name[loser]
        assert refused.status == 409, refused
        assert refused.body["error"]["code"] == refusal
        assert refused.body["error"]["requestId"] == f"{loser}-{n}"
        if refusal == "NOT_YOUR_STEP":
            # the step has moved on: the message names the step now open, in words
            assert refused.body["error"]["message"] == NOT_WAITING_FOR.format(step="Sign off")
        else:
            assert refused.body["error"]["message"] == "the workflow has finished (COMPLETED)"
        decided = list(
            WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").values_list(
                "actor__username", "request_id"
            )
        )
        assert decided == [(winner, f"{winner}-{n}")]
        assert not PendingTask.objects.filter(workflow_id=wid, step="pair").exists()
        assert_history_intact(wid)
