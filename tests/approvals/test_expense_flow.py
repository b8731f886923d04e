"""The demo expense routing, end to end through the API on PostgreSQL."""

from __future__ import annotations

import pytest

from approvals.audit.verify import chain_verify as verify_chain
from approvals.models import PendingTask, Workflow, WorkflowEvent

from .helpers import decide, start_expense

pytestmark = pytest.mark.django_db


def test_small_expense_is_approved_at_once(acme, api):
    response = start_expense(api("alice"), 99_999)

    assert response.status_code == 201
    assert response.json()["status"] == "APPROVED"
    assert not PendingTask.objects.exists()


def test_expense_routes_manager_then_finance(acme, api):
    # given
    started = start_expense(api("alice"), 4_500_000)
    body = started.json()
    wid = body["workflowId"]
    assert started.status_code == 201
    assert started["Location"] == f"/api/workflows/{wid}"
    assert body["status"] == "PENDING_MANAGER"
    assert body["templateVersion"] == 1

    # when bob approves
    after_bob = decide(api("bob"), wid, "approve", "bob-1")

    # then finance is next
    assert after_bob.status_code == 200
    assert after_bob.json() == {
        "status": "PENDING_FINANCE",
        "version": after_bob.json()["version"],
        "duplicate": False,
        "message": after_bob.json()["message"],
    }
    assert after_bob.json()["message"].startswith("Approved Expense claim ")
    tasks = api("fiona").get("/api/me/tasks").json()["items"]
    assert [(t["workflowId"], t["step"]) for t in tasks] == [(wid, "finance")]
    assert api("bob").get("/api/me/tasks").json()["items"] == []

    # when fiona approves
    done = decide(api("fiona"), wid, "approve", "fiona-1")
    assert done.json()["status"] == "APPROVED"

    detail = api("alice").get(f"/api/workflows/{wid}").json()
    assert detail["status"] == "APPROVED"
    decided = [
        (h["actor"], h["payload"]["step"])
        for h in detail["history"]
        if h["type"] == "DecisionRecorded"
    ]
    assert decided == [("bob", "manager"), ("fiona", "finance")]
    wf = Workflow.objects.get(pk=wid)
    assert wf.version == WorkflowEvent.objects.filter(workflow=wf).count() == detail["version"]
    assert verify_chain(workflow=wf) is None


def test_large_expense_goes_through_the_vp(acme, api):
    wid = start_expense(api("alice"), 10_000_001).json()["workflowId"]
    assert decide(api("bob"), wid, "approve", "b").json()["status"] == "PENDING_VP"
    assert decide(api("victor"), wid, "approve", "v").json()["status"] == "PENDING_FINANCE"


def test_repeated_request_id_is_a_duplicate_with_the_same_answer(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    first = decide(api("bob"), wid, "approve", "same")
    again = decide(api("bob"), wid, "approve", "same")

    assert again.status_code == 200
    assert again.json() == {**first.json(), "duplicate": True}
    assert WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").count() == 1


def test_decision_by_someone_else_is_409_not_your_step(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    before = Workflow.objects.get(pk=wid).version

    response = decide(api("victor"), wid, "approve", "v-early")
    assert response.status_code == 404  # victor is on no step of it yet: no hint it exists

    response = decide(api("olga"), wid, "approve", "o-early")  # an org admin reads it

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "NOT_YOUR_STEP"
    assert response.json()["error"]["requestId"] == "o-early"
    assert Workflow.objects.get(pk=wid).version == before


def test_a_finance_rejection_ends_the_workflow_rejected(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    decide(api("bob"), wid, "approve", "yes")
    response = decide(api("fiona"), wid, "reject", "no", comment="Not in budget")
    assert response.json()["status"] == "REJECTED"
    history = api("alice").get(f"/api/workflows/{wid}").json()["history"]
    assert [h["comment"] for h in history if h["type"] == "DecisionRecorded"] == [
        "",
        "Not in budget",
    ]


def test_events_cannot_be_updated_or_deleted(acme, api):
    from django.db import DatabaseError, connection, transaction

    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    with pytest.raises(DatabaseError), transaction.atomic():
        WorkflowEvent.objects.filter(workflow_id=wid).update(type="Forged")
    with pytest.raises(DatabaseError), transaction.atomic():
        WorkflowEvent.objects.filter(workflow_id=wid).delete()
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL approvals.allow_truncate = off")
        cursor.execute("TRUNCATE approvals_workflowevent CASCADE")
    assert WorkflowEvent.objects.filter(workflow_id=wid, type="Forged").count() == 0


def test_in_an_all_step_the_other_approvers_task_keeps_its_place(acme, api):
    # given an IT hardware purchase waiting on bob and ivan together
    body = {
        "template": "purchase-request",
        "subject": {"type": "po", "id": "PO-1"},
        "data": {
            "amountPaise": 500_000,
            "currency": "INR",
            "category": "IT_HARDWARE",
            "item": "laptop",
        },
    }
    wid = api("alice").post("/api/workflows", body, format="json").json()["workflowId"]
    ivans = PendingTask.objects.get(workflow_id=wid, assignee__username="ivan")

    # when bob approves his part
    assert decide(api("bob"), wid, "approve", "b").json()["status"] == "PENDING_REVIEW"

    # then ivan's task is the same row (same id, same assigned time), bob's is gone
    after = PendingTask.objects.get(workflow_id=wid)
    assert (after.pk, after.created_at, after.assignee.username) == (
        ivans.pk,
        ivans.created_at,
        "ivan",
    )


def test_the_models_status_machine_names_exactly_the_engines_statuses():
    from approvals.models import WorkflowStatus
    from templates_engine import NEW, RUNNING, TERMINAL
    from templates_engine.state import COMPENSATING

    assert set(WorkflowStatus.values) == {NEW, RUNNING, COMPENSATING, *TERMINAL}


def test_the_specifications_flow_rejection_back_to_alice_and_a_question_back_to_the_manager(
    acme, api
):
    from django.test import Client

    from approvals.models import User

    def page(username: str) -> str:
        client = Client()
        client.force_login(User.objects.get(username=username))
        response = client.get(f"/workflows/{wid}")
        assert response.status_code == 200
        return response.content.decode()

    # given alice's expense waits for her manager
    started = start_expense(api("alice"), 4_500_000, subject="E-SPEC")
    wid = started.json()["workflowId"]
    assert started.json()["status"] == "PENDING_MANAGER"

    # when bob rejects it with a reason, it goes back to alice with the reason
    rejected = decide(api("bob"), wid, "reject", "bob-1", comment="The receipt is missing")
    assert rejected.json()["status"] == "PENDING_SUBMITTER"
    assert rejected.json()["message"] == "Sent Expense claim E-SPEC back to Alice."
    alices = page("alice")
    assert "Bob sent it back to you from the Manager step:" in alices
    assert "“The receipt is missing”" in alices
    assert 'id="resubmit"' in alices
    history = api("alice").get(f"/api/workflows/{wid}").json()["history"]
    assert [(h["type"], h["comment"]) for h in history if h["comment"]] == [
        ("DecisionRecorded", "The receipt is missing")
    ]

    # alice resubmits with the receipt; the manager approves
    again = decide(
        api("alice"), wid, "approve", "alice-1", data={"description": "Receipt attached"}
    )
    assert again.json()["status"] == "PENDING_MANAGER"
    assert "sent it back" not in page("alice")
    assert decide(api("bob"), wid, "approve", "bob-2").json()["status"] == "PENDING_FINANCE"

    # finance sends it back to the manager with a question
    asked = decide(api("fiona"), wid, "send_back", "fiona-1", comment="Which project?")
    assert asked.json()["status"] == "PENDING_MANAGER"
    bobs = page("bob")
    assert "Fiona sent it back to the Manager step from the Finance step with a question:" in bobs
    assert "“Which project?”" in bobs

    # the manager approves again, and finance approves
    assert decide(api("bob"), wid, "approve", "bob-3").json()["status"] == "PENDING_FINANCE"
    done = decide(api("fiona"), wid, "approve", "fiona-2")

    assert done.json()["status"] == "APPROVED"
    wf = Workflow.objects.get(pk=wid)
    assert wf.data["description"] == "Receipt attached"
    decided = [
        (h["actor"], h["payload"]["step"], h["payload"]["decision"])
        for h in api("alice").get(f"/api/workflows/{wid}").json()["history"]
        if h["type"] == "DecisionRecorded"
    ]
    assert decided == [
        ("bob", "manager", "reject"),
        ("bob", "manager", "approve"),
        ("fiona", "finance", "send_back"),
        ("bob", "manager", "approve"),
        ("fiona", "finance", "approve"),
    ]


def test_the_submitter_may_withdraw_after_the_managers_rejection(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    decide(api("bob"), wid, "reject", "bob-1", comment="Not in budget")

    withdrawn = decide(api("alice"), wid, "reject", "alice-1", comment="Fair enough")

    assert withdrawn.json()["status"] == "WITHDRAWN"
