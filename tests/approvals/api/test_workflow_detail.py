"""GET /api/workflows/{id} (state, pinned template version, full history), who may see
it, template versions, and GET /api/workflows (search)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest
from django.utils import timezone

from approvals import clock
from approvals.api import errors as api_errors
from approvals.demo import definitions
from approvals.models import Delegation, User, WorkflowTemplate
from approvals.services.templates import workflow_template_publish

from ..helpers import EXPENSE, decide, start_expense

pytestmark = pytest.mark.django_db

PENDING_AMOUNT = 4_500_000  # manager, then finance
INSTANT_AMOUNT = 99_999  # approved at once

HISTORY_KEYS = {"seq", "type", "actor", "role", "onBehalfOf", "at", "comment", "payload"}


def _expense_definition() -> dict[str, Any]:
    return next(d for d in definitions() if d["key"] == EXPENSE)


def _start(api: Any, amount: int = PENDING_AMOUNT, subject: str = "E-1", **data: Any) -> str:
    response = start_expense(api("alice"), amount, subject=subject, **data)
    assert response.status_code == 201, response.content
    return response.json()["workflowId"]


def _get(client: Any, wid: str) -> dict[str, Any]:
    response = client.get(f"/api/workflows/{wid}")
    assert response.status_code == 200, response.content
    return response.json()


# -- the detail ----------------------------------------------------------------------------


def test_detail_shows_state_template_data_and_assignees(acme, api):
    # given
    wid = _start(api, subject="E-77", description="Flights")
    assert decide(api("bob"), wid, "approve", "bob-1", comment="fine by me").status_code == 200

    # when
    detail = _get(api("alice"), wid)

    # then
    assert detail["workflowId"] == wid
    assert detail["status"] == "PENDING_FINANCE"
    assert detail["engineStatus"] == "RUNNING"
    assert detail["template"] == EXPENSE
    assert detail["templateVersion"] == 1
    assert detail["subject"] == {"type": "expense", "id": "E-77"}
    assert detail["data"] == {
        "amountPaise": PENDING_AMOUNT,
        "currency": "INR",
        "department": "eng",
        "description": "Flights",
    }
    assert detail["submitter"] == "alice"
    assert detail["currentStep"] == "finance"
    assert detail["assignees"] == [
        {"user": "farah", "onBehalfOf": None},
        {"user": "fiona", "onBehalfOf": None},
    ]
    assert detail["version"] == len(detail["history"])
    dt.datetime.fromisoformat(detail["createdAt"])


def test_detail_has_the_full_history(acme, api):
    # given
    wid = _start(api)
    decide(api("bob"), wid, "approve", "bob-1", comment="fine by me")
    decide(api("fiona"), wid, "approve", "fiona-1", comment="paid")

    # when
    detail = _get(api("alice"), wid)

    # then
    history = detail["history"]
    assert detail["status"] == "APPROVED"
    assert detail["currentStep"] is None
    assert detail["assignees"] == []
    assert all(set(h) == HISTORY_KEYS for h in history)
    assert [h["seq"] for h in history] == list(range(1, len(history) + 1))
    moments = [dt.datetime.fromisoformat(h["at"]) for h in history]
    assert moments == sorted(moments)
    started = history[0]
    assert (started["type"], started["actor"], started["role"]) == (
        "WorkflowStarted",
        "alice",
        "submitter",
    )
    assert started["onBehalfOf"] is None
    decisions = [
        (h["actor"], h["role"], h["onBehalfOf"], h["comment"], h["payload"]["step"])
        for h in history
        if h["type"] == "DecisionRecorded"
    ]
    assert decisions == [
        ("bob", "approver", None, "fine by me", "manager"),
        ("fiona", "approver", None, "paid", "finance"),
    ]
    assert history[-1]["type"] == "WorkflowCompleted"
    assert detail["version"] == history[-1]["seq"]


def test_history_records_on_behalf_of_under_a_delegation(acme, api):
    # given bob is away and victor decides for him
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=User.objects.get(username="bob"),
        delegate=User.objects.get(username="victor"),
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=7),
    )
    wid = _start(api)
    assert _get(api("alice"), wid)["assignees"] == [{"user": "victor", "onBehalfOf": "bob"}]

    # when
    response = decide(api("victor"), wid, "approve", "victor-1", comment="for bob")

    # then
    assert response.status_code == 200, response.content
    history = _get(api("alice"), wid)["history"]
    (decision,) = [h for h in history if h["type"] == "DecisionRecorded"]
    assert (decision["actor"], decision["onBehalfOf"], decision["comment"]) == (
        "victor",
        "bob",
        "for bob",
    )


# -- who may see a workflow ---------------------------------------------------------------------


@pytest.mark.parametrize("username", ["alice", "bob", "audrey", "admin"])
def test_submitter_assignee_auditor_and_admin_see_it(acme, api, username):
    wid = _start(api)

    assert _get(api(username), wid)["workflowId"] == wid


@pytest.mark.parametrize("username", ["ivan", "fiona", "victor"])
def test_unrelated_user_in_the_same_tenant_gets_404(acme, api, username):
    # fiona is the finance approver, but the workflow has not reached her yet
    wid = _start(api)

    response = api(username).get(f"/api/workflows/{wid}")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert response.json()["error"]["message"] == api_errors.NOT_FOUND


def test_past_deciders_keep_seeing_it_and_the_next_assignee_starts_to(acme, api):
    wid = _start(api)
    assert api("fiona").get(f"/api/workflows/{wid}").status_code == 404

    decide(api("bob"), wid, "approve", "bob-1")

    assert _get(api("bob"), wid)["status"] == "PENDING_FINANCE"  # decided, no task left
    assert _get(api("fiona"), wid)["currentStep"] == "finance"  # now an assignee
    assert api("ivan").get(f"/api/workflows/{wid}").status_code == 404


# -- template versions ---------------------------------------------------------------------------


def test_running_workflow_stays_pinned_to_its_template_version(acme, api):
    # given a workflow running on version 1
    old = _start(api, subject="OLD")

    # when a changed template is published: no manager step any more
    changed = copy.deepcopy(_expense_definition())
    changed["steps"] = [s for s in changed["steps"] if s["id"] != "manager"]
    for step in changed["steps"]:
        step.pop("send_back_to", None)  # finance sent back to the manager step
    published = workflow_template_publish(tenant=acme, definition=changed)
    assert published.version == 2
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).count() == 2

    # then new starts use version 2, the old workflow keeps version 1 and its routing
    new_start = start_expense(api("alice"), PENDING_AMOUNT, subject="NEW").json()
    assert new_start["templateVersion"] == 2
    assert new_start["status"] == "PENDING_FINANCE"
    assert _get(api("alice"), new_start["workflowId"])["templateVersion"] == 2
    assert _get(api("alice"), old)["templateVersion"] == 1
    assert _get(api("alice"), old)["currentStep"] == "manager"
    after_bob = decide(api("bob"), old, "approve", "bob-old")
    assert after_bob.json()["status"] == "PENDING_FINANCE"
    assert _get(api("alice"), old)["templateVersion"] == 1


def test_publishing_the_same_definition_again_makes_no_new_version(acme):
    again = workflow_template_publish(tenant=acme, definition=_expense_definition())

    assert again.version == 1
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).count() == 1


# -- search ----------------------------------------------------------------------------------


@pytest.fixture
def three(acme: Any, api: Any) -> dict[str, str]:
    """Three of alice's workflows: two waiting (manager, finance), one approved."""
    waiting = _start(api, subject="TRIP-1")
    at_finance = _start(api, subject="TRIP-2")
    decide(api("bob"), at_finance, "approve", "bob-t2")
    approved = _start(api, INSTANT_AMOUNT, subject="LUNCH-1")
    return {"waiting": waiting, "at_finance": at_finance, "approved": approved}


def _search(client: Any, **params: Any) -> list[str]:
    response = client.get("/api/workflows", params)
    assert response.status_code == 200, response.content
    return [w["workflowId"] for w in response.json()["workflows"]]


def test_search_by_status(three, api):
    alice = api("alice")

    assert _search(alice, status="PENDING_MANAGER") == [three["waiting"]]
    assert _search(alice, status="PENDING_FINANCE") == [three["at_finance"]]
    assert _search(alice, status="APPROVED") == [three["approved"]]
    assert set(_search(alice, status="RUNNING")) == {three["waiting"], three["at_finance"]}
    assert _search(alice, status="REJECTED") == []


def test_search_by_template_and_subject(three, api):
    alice = api("alice")

    assert set(_search(alice, template=EXPENSE)) == set(three.values())
    assert _search(alice, template="purchase-request") == []
    assert _search(alice, subjectType="expense", subjectId="TRIP-2") == [three["at_finance"]]
    assert set(_search(alice, text="trip")) == {three["waiting"], three["at_finance"]}
    assert _search(alice, subjectType="invoice") == []


def test_search_by_assignee_and_submitter(three, api):
    audrey = api("audrey")

    assert _search(audrey, assignee="bob") == [three["waiting"]]
    assert _search(audrey, assignee="fiona") == [three["at_finance"]]
    assert set(_search(audrey, submitter="alice")) == set(three.values())
    assert _search(audrey, submitter="bob") == []


def test_search_lists_newest_first_with_the_summary(three, api):
    found = api("alice").get("/api/workflows").json()["workflows"]

    assert [w["workflowId"] for w in found] == [
        three["approved"],
        three["at_finance"],
        three["waiting"],
    ]
    summary = found[1]
    assert summary["status"] == "PENDING_FINANCE"
    assert summary["template"] == EXPENSE
    assert summary["templateVersion"] == 1
    assert summary["subject"] == {"type": "expense", "id": "TRIP-2"}
    assert summary["submitter"] == "alice"
    assert summary["currentStep"] == "finance"


def test_search_by_created_dates_and_paging(three, api):
    alice = api("alice")
    now = timezone.now()  # created_at is stamped by the database layer, not the app clock

    assert _search(alice, createdBefore=(now - dt.timedelta(days=1)).isoformat()) == []
    assert len(_search(alice, createdAfter=(now - dt.timedelta(days=1)).isoformat())) == 3
    first = _search(alice, limit=2)
    rest = _search(alice, limit=2, offset=2)
    assert len(first) == 2 and len(rest) == 1
    assert set(first + rest) == set(three.values())


def test_search_shows_only_what_the_user_may_see(three, api):
    assert _search(api("ivan")) == []
    assert _search(api("bob")) == [three["at_finance"], three["waiting"]]
    assert _search(api("fiona")) == [three["at_finance"]]
    assert len(_search(api("audrey"))) == 3


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "201"},
        {"offset": "-1"},
        {"createdAfter": "yesterday"},
        {"text": "x" * 201},
    ],
)
def test_bad_search_parameters_are_400(acme, api, params):
    response = api("alice").get("/api/workflows", params)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"
    assert response.json()["error"]["message"].startswith(next(iter(params)))
