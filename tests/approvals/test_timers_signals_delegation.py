"""Deadlines, reminders, escalation, signals and delegations through the app, with the
poller run in-process under a shifted clock (no sleeping through real deadlines)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from approvals import clock
from approvals.models import (
    Delegation,
    PendingTask,
    Timer,
    User,
    Workflow,
    WorkflowEvent,
    WorkflowTemplate,
)
from approvals.services.templates import workflow_template_publish
from approvals.services.tokens import token_issue
from approvals.services.workflows import SIGNAL_UNDECLARED
from approvals.workers.timers import timer_drain
from templates_engine.snapshot import SNAPSHOT_VERSION

from .helpers import decide, start_expense

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)


def _types(wid: str) -> list[str]:
    return list(
        WorkflowEvent.objects.filter(workflow_id=wid).order_by("seq").values_list("type", flat=True)
    )


def test_reminder_after_a_day_and_escalation_to_the_managers_manager_at_the_deadline(acme, api):
    # given an expense waiting on bob, with a reminder at 1 day and a deadline at 2
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    assert Timer.objects.filter(workflow_id=wid, fired_at__isnull=True).count() == 2

    # when less than a day passes, nothing fires
    with clock.shifted(DAY - dt.timedelta(seconds=1)):
        assert timer_drain() == 0

    # when a day passes, bob is reminded; the event that says the timer fired comes
    # first, and its row is marked fired in the same transaction
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1
    reminder = WorkflowEvent.objects.get(workflow_id=wid, type="ReminderSent")
    assert reminder.payload["users"] == ["bob"]
    fired = WorkflowEvent.objects.get(workflow_id=wid, type="TimerFired")
    assert (fired.seq, fired.payload["kind"]) == (reminder.seq - 1, "reminder")
    row = Timer.objects.get(workflow_id=wid, key=fired.payload["key"])
    assert row.fired_at is not None

    # when the deadline passes, the task moves to bob's manager, victor
    with clock.shifted(2 * DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1
        assert timer_drain() == 0  # fired once only
    escalated = WorkflowEvent.objects.get(workflow_id=wid, type="Escalated")
    assert [a["user"] for a in escalated.payload["assignments"]] == ["victor"]
    assert list(
        PendingTask.objects.filter(workflow_id=wid).values_list("assignee__username", flat=True)
    ) == ["victor"]
    assert decide(api("bob"), wid, "approve", "late-bob").json()["error"]["code"] == (
        "NOT_YOUR_STEP"
    )
    assert decide(api("victor"), wid, "approve", "v").json()["status"] == "PENDING_FINANCE"


def test_a_decision_cancels_the_steps_timers(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    decide(api("bob"), wid, "approve", "b")

    manager_timers = Timer.objects.filter(workflow_id=wid, step="manager")
    assert not manager_timers.exists()
    with clock.shifted(3 * DAY):
        timer_drain()
    for kind in ("ReminderSent", "Escalated"):
        assert not WorkflowEvent.objects.filter(
            workflow_id=wid, type=kind, payload__step="manager"
        ).exists()
    assert "ApprovalRequested" in _types(wid)


def test_a_timer_row_the_workflow_no_longer_holds_is_marked_fired_without_an_event(acme, api):
    # given a due row for a timer the workflow does not hold (its state never had it)
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    version = Workflow.objects.get(pk=wid).version
    stray = Timer.objects.create(
        tenant=acme,
        workflow_id=wid,
        key="manager#9:reminder:0",
        step="manager",
        kind="reminder",
        fire_at=clock.now(),
    )

    # when the poller fires it
    assert timer_drain() == 1

    # then nothing happened to the workflow, and the row is not fired again
    stray.refresh_from_db()
    assert stray.fired_at is not None
    assert Workflow.objects.get(pk=wid).version == version
    assert "TimerFired" not in _types(wid)
    assert timer_drain() == 0


def _signal_template(acme) -> None:
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "vendor-onboarding",
            "steps": [
                {"id": "contract", "kind": "signal", "signal": "contract_signed", "timeout": "P7D"},
                {"id": "finance", "kind": "approval", "approvers": [{"group": "finance"}]},
            ],
        },
    )


def _start_vendor(api) -> str:
    body = {"template": "vendor-onboarding", "subject": {"type": "vendor", "id": "V-1"}, "data": {}}
    response = api("alice").post("/api/workflows", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["workflowId"]


def test_a_signal_resumes_the_step_with_its_payload_and_repeats_are_duplicates(acme, api):
    _signal_template(acme)
    wid = _start_vendor(api)
    url = f"/api/workflows/{wid}/signals/contract_signed"
    body = {"requestId": "docusign-evt-1", "payload": {"envelope": "E-77"}}

    first = api("olga").post(url, body, format="json")
    again = api("olga").post(url, body, format="json")

    assert first.status_code == 200
    assert first.json()["status"] == "PENDING_FINANCE"
    assert again.json() == {**first.json(), "duplicate": True}
    wf = Workflow.objects.get(pk=wid)
    assert wf.data["signals"]["contract_signed"] == {"envelope": "E-77"}
    assert WorkflowEvent.objects.filter(workflow_id=wid, type="SignalReceived").count() == 1


def test_a_signal_the_workflow_template_does_not_declare_is_refused_clearly(acme, api):
    _signal_template(acme)
    wid = _start_vendor(api)

    response = api("olga").post(
        f"/api/workflows/{wid}/signals/unexpected",
        {"requestId": "x-1", "payload": {"a": 1}},
        format="json",
    )

    assert response.status_code == 409
    assert response.json()["error"]["message"] == SIGNAL_UNDECLARED.format(name="unexpected")
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="SignalReceived").exists()
    assert Workflow.objects.get(pk=wid).current_step == "contract"


def _contract_after_the_manager(acme) -> None:
    """A purchase's route: the manager approves, the ERP says the contract is signed
    (within seven days), finance approves."""
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "vendor-onboarding",
            "title": "Vendor onboarding",
            "steps": [
                {"id": "manager", "kind": "approval", "approvers": [{"manager": "submitter"}]},
                {
                    "id": "contract",
                    "title": "Contract",
                    "kind": "signal",
                    "signal": "contract_signed",
                    "timeout": "P7D",
                },
                {"id": "finance", "kind": "approval", "approvers": [{"group": "finance"}]},
            ],
        },
    )


def _erp() -> APIClient:
    """The integration account, with a token scoped to sending ``contract_signed``."""
    erp = User.objects.get(username="erp")
    _, secret = token_issue(user=erp, name="erp", may_signal=["contract_signed"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_a_signal_sent_before_its_step_is_used_when_the_step_begins(acme, api, client):
    # given a workflow waiting on the manager, and the ERP signing the contract already
    _contract_after_the_manager(acme)
    wid = _start_vendor(api)
    url = f"/api/workflows/{wid}/signals/contract_signed"
    body = {"requestId": "erp-contract-1", "payload": {"envelope": "E-77"}}

    # when the ERP sends it early, twice under one request id
    first = _erp().post(url, body, format="json")
    again = _erp().post(url, body, format="json")

    # then it is answered as any signal, kept once, and the manager still decides
    assert first.status_code == 200, first.content
    assert first.json()["status"] == "PENDING_MANAGER"
    assert again.json() == {**first.json(), "duplicate": True}
    assert _types(wid).count("SignalArrivedEarly") == 1

    # when the manager approves, the contract step begins and uses it at once
    assert decide(api("bob"), wid, "approve", "m-1").json()["status"] == "PENDING_FINANCE"
    wf = Workflow.objects.get(pk=wid)
    assert wf.data["signals"]["contract_signed"] == {"envelope": "E-77"}
    received = WorkflowEvent.objects.get(workflow_id=wid, type="SignalReceived")
    assert (received.payload["step"], received.payload["early"]) == ("contract", True)

    # then its timeout never fails the workflow: no timer was set for it
    assert not Timer.objects.filter(workflow_id=wid, fired_at__isnull=True).exists()
    with clock.shifted(8 * DAY):
        timer_drain()
    assert "StepFailed" not in _types(wid)
    assert decide(api("fiona"), wid, "approve", "f-1").json()["status"] == "APPROVED"

    # and the workflow page says when it arrived and that the step used it
    client.force_login(User.objects.get(username="alice"))
    page = client.get(f"/workflows/{wid}").content.decode()
    assert "Contract signed arrived early; used when the step began" in page
    assert "The Contract step began and used contract signed, which had arrived early" in page


def test_a_signal_for_a_finished_workflow_is_still_refused(acme, api):
    _contract_after_the_manager(acme)
    wid = _start_vendor(api)
    cancel = api("alice").post(f"/api/workflows/{wid}/cancel", {"requestId": "c-1"}, format="json")
    assert cancel.status_code == 200, cancel.content
    assert Workflow.objects.get(pk=wid).status == "CANCELLED"

    response = _erp().post(
        f"/api/workflows/{wid}/signals/contract_signed",
        {"requestId": "late-1", "payload": {}},
        format="json",
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "WORKFLOW_FINISHED"
    assert "SignalArrivedEarly" not in _types(wid)


def test_a_signal_step_times_out(acme, api):
    _signal_template(acme)
    wid = _start_vendor(api)

    with clock.shifted(7 * DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1

    wf = Workflow.objects.get(pk=wid)
    assert wf.status == "ROLLED_BACK"
    failed = WorkflowEvent.objects.get(workflow_id=wid, type="StepFailed")
    assert failed.payload["error"] == "Timeout"


def test_a_delegation_active_at_assignment_routes_to_the_delegate(acme, api):
    # given bob is away and victor stands in for him
    now = clock.now()
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")
    Delegation.objects.create(
        tenant=acme, user=bob, delegate=victor, starts_at=now - DAY, ends_at=now + DAY
    )

    # when alice submits
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]

    # then victor holds the task for bob, and the history says so
    task = PendingTask.objects.get(workflow_id=wid)
    assert (task.assignee.username, task.on_behalf_of) == ("victor", "bob")
    assert decide(api("victor"), wid, "approve", "v").json()["status"] == "PENDING_FINANCE"
    history = api("alice").get(f"/api/workflows/{wid}").json()["history"]
    decided = [h for h in history if h["type"] == "DecisionRecorded"]
    assert [(h["actor"], h["onBehalfOf"]) for h in decided] == [("victor", "bob")]


def test_delegate_decision_moves_the_task(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]

    response = decide(api("bob"), wid, "delegate", "d-1", delegateTo="victor")

    assert response.status_code == 200
    assert response.json()["status"] == "PENDING_MANAGER"
    assert list(
        PendingTask.objects.filter(workflow_id=wid).values_list(
            "assignee__username", "on_behalf_of"
        )
    ) == [("victor", "bob")]


def test_system_check_reports_an_unregistered_activity(acme, capsys):
    from django.core.management.base import SystemCheckError

    # Publishing refuses an unknown activity; a version published while the activity
    # still existed (its code removed since) is what the check is for.
    WorkflowTemplate.objects.create(
        tenant=acme,
        key="ghost",
        version=1,
        title="ghost",
        definition={
            "key": "ghost",
            "steps": [{"id": "call", "kind": "action", "activity": "no_such_thing"}],
        },
    )

    with pytest.raises(SystemCheckError) as failed:
        call_command("check", "--database", "default")

    assert "no_such_thing" in str(failed.value)
    assert "approvals.E002" in str(failed.value)


def test_healthz_and_metrics(acme, client):
    assert client.get("/healthz").json() == {"status": "ok"}
    body = client.get("/metrics").content.decode()
    assert "approvals_oldest_due_timer_age_seconds" in body
    assert "approvals_due_timers" in body


def test_fired_timers_are_pruned_after_the_retention_and_pending_ones_stay(acme, api):
    from approvals.workers.timers import timer_prune

    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1  # the reminder fires; the deadline stays pending

    with clock.shifted(3 * DAY):
        assert timer_prune(older_than=7 * DAY) == 0
    with clock.shifted(9 * DAY):
        assert timer_prune(older_than=7 * DAY) == 1

    assert list(Timer.objects.filter(workflow_id=wid).values_list("kind", "fired_at")) == [
        ("deadline", None)
    ]


# Committed transactions: a failed fire rolls back its own transaction, which a test
# wrapped in one outer transaction could not survive.
@pytest.mark.django_db(transaction=True)
def test_a_timer_that_keeps_failing_is_parked_not_retried_forever(acme, api):
    from approvals.workers.timers import CLAIM_SECONDS, MAX_FIRE_FAILURES

    # given a workflow whose stored state cannot be read, so its timers cannot fire
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    Workflow.objects.filter(pk=wid).update(
        snapshot={"snapshot_version": SNAPSHOT_VERSION, "broken": True}
    )
    reminder = Timer.objects.get(workflow_id=wid, kind="reminder")

    # when the poller retries it, each claim lapsing before the next
    for attempt in range(MAX_FIRE_FAILURES + 2):
        shift = DAY + dt.timedelta(seconds=1 + attempt * (CLAIM_SECONDS + 1))
        with clock.shifted(shift):
            assert timer_drain() == 0

    # then it failed exactly MAX_FIRE_FAILURES times and is parked, with the error kept
    reminder.refresh_from_db()
    assert reminder.failures == MAX_FIRE_FAILURES
    assert reminder.dead_at is not None and reminder.fired_at is None
    assert reminder.last_error.startswith("KeyError")
    body = api("audrey").get("/metrics").content.decode()
    assert "approvals_dead_timers 1.0" in body
