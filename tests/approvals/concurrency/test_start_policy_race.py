"""Concurrent starts for one subject over HTTP, under each start policy: the database's
partial unique index lets exactly one win, and the others are answered as the policy
says."""

from __future__ import annotations

from functools import partial

import pytest

from approvals.models import Tenant, Workflow
from approvals.services.templates import workflow_template_publish

from .support import assert_history_intact, race

pytestmark = pytest.mark.django_db(transaction=True)

STARTS = 12
TEMPLATE = "vendor-check"
BODY = {"template": TEMPLATE, "subject": {"type": "vendor", "id": "V-race"}, "data": {}}


def _publish(while_running: str) -> None:
    workflow_template_publish(
        tenant=Tenant.objects.get(slug="acme"),
        definition={
            "key": TEMPLATE,
            "start_policy": {"while_running": while_running},
            "steps": [{"id": "finance", "kind": "approval", "approvers": [{"user": "fiona"}]}],
        },
    )


@pytest.mark.parametrize("round_", range(3))
def test_under_reject_one_start_wins_and_the_others_are_409_naming_it(http, round_):
    # given
    _publish("reject")
    alice = http("alice")

    # when
    replies = race([partial(alice.post, "/api/workflows", BODY)] * STARTS)

    # then
    assert sorted(r.status for r in replies) == [201] + [409] * (STARTS - 1), replies
    winner = next(r.body["workflowId"] for r in replies if r.status == 201)
    for reply in (r for r in replies if r.status == 409):
        assert reply.body["error"]["code"] == "WORKFLOW_ALREADY_RUNNING"
        assert reply.body["error"]["workflowId"] == winner
    assert [str(pk) for pk in Workflow.objects.values_list("pk", flat=True)] == [winner]
    assert_history_intact(winner)


@pytest.mark.parametrize("round_", range(3))
def test_under_use_existing_every_start_gets_the_one_workflow(http, round_):
    _publish("use_existing")
    alice = http("alice")

    replies = race([partial(alice.post, "/api/workflows", BODY)] * STARTS)

    assert sorted(r.status for r in replies) == [200] * (STARTS - 1) + [201], replies
    assert len({r.body["workflowId"] for r in replies}) == 1
    assert [r.body["existing"] for r in replies].count(False) == 1
    assert Workflow.objects.count() == 1
    assert_history_intact(Workflow.objects.get().pk)


def test_under_allow_every_start_gets_its_own_workflow(http):
    _publish("allow")
    alice = http("alice")

    replies = race([partial(alice.post, "/api/workflows", BODY)] * STARTS)

    assert [r.status for r in replies] == [201] * STARTS, replies
    assert len({r.body["workflowId"] for r in replies}) == STARTS
    assert Workflow.objects.count() == STARTS
