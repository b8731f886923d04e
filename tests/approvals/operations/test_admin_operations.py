"""An organisation admin deals with workflows from Django admin: cancel, reassign, retry
a step that failed for good, retry or settle by hand a failed roll-back, re-arm a
parked timer. Each goes through the command path and leaves an event with who and why;
a refused operation changes nothing; and no admin form edits a workflow, an event, a
task or a timer."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client

from approvals import clock
from approvals.activities import activity
from approvals.models import (
    ActivityAttempt,
    PendingTask,
    Timer,
    User,
    Workflow,
    WorkflowEvent,
)
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start
from approvals.workers.activities import attempt_run

pytestmark = pytest.mark.django_db

DOWN: set[str] = set()  # the activities failing now


def _maybe_fail(name: str) -> Any:
    def run(key: str, data: dict[str, Any]) -> dict[str, str]:
        if name in DOWN:
            raise ConnectionError(f"{name} is down")
        return {"ref": key}

    return run


for _name in ("ops_reserve", "ops_release", "ops_book"):
    activity(_name)(_maybe_fail(_name))

SAGA = {
    "key": "ops-saga",
    "title": "Vendor booking",
    "steps": [
        {
            "id": "reserve",
            "kind": "action",
            "activity": "ops_reserve",
            "retry": {"max_attempts": 2},
            "compensate": {"activity": "ops_release", "retry": {"max_attempts": 2}},
        },
        {"id": "book", "kind": "action", "activity": "ops_book", "retry": {"max_attempts": 2}},
        {
            "id": "manager",
            "kind": "approval",
            "approvers": [{"manager": "submitter"}],
            "deadline": "P1D",
        },
    ],
}


@pytest.fixture(autouse=True)
def _all_up() -> Any:
    DOWN.clear()
    yield
    DOWN.clear()


def start(acme: Any, n: int = 1) -> str:
    workflow_template_publish(tenant=acme, definition=SAGA)
    return str(
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="ops-saga",
            subject_type="booking",
            subject_id=f"B-{n}",
            data={},
        ).workflow_id
    )


def run_attempts(wid: str) -> str:
    """Run every attempt the workflow schedules, moving the clock past each back-off."""
    for i in range(1, 30):
        attempt = ActivityAttempt.objects.filter(workflow_id=wid, finished_at__isnull=True).first()
        if attempt is None:
            break
        with clock.shifted(dt.timedelta(seconds=1000 * i)):
            attempt_run(attempt_id=attempt.pk)
    return Workflow.objects.get(pk=wid).status


def signed_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def operate(client: Client, wid: str, operation: str, **fields: Any) -> Any:
    page = client.get(f"/admin/approvals/workflow/{wid}/operations/")
    assert page.status_code == 200, page.content[:300]
    form = next(f for f in page.context["forms"] if f.name == operation)
    body = {"operation": operation, f"{operation}-request_id": form.initial["request_id"]}
    body.update({f"{operation}-{k}": v for k, v in fields.items()})
    return client.post(f"/admin/approvals/workflow/{wid}/operations/", body)


def last_event(wid: str) -> WorkflowEvent:
    return WorkflowEvent.objects.filter(workflow_id=wid).latest("seq")


def events_of(wid: str, kind: str) -> list[WorkflowEvent]:
    return list(WorkflowEvent.objects.filter(workflow_id=wid, type=kind).order_by("seq"))


class TestOperations:
    def test_cancel_records_who_and_why(self, acme):
        wid = start(acme)
        assert run_attempts(wid) == "RUNNING"

        reply = operate(signed_in("olga"), wid, "cancel", reason="duplicate of B-2")

        assert reply.status_code == 302
        run_attempts(wid)  # the reservation is undone first
        assert Workflow.objects.get(pk=wid).status == "CANCELLED"
        started = events_of(wid, "CompensationStarted")[0]
        assert started.actor == User.objects.get(username="olga") and started.role == "admin"
        assert "duplicate of B-2" in started.payload["reason"]

    def test_reassign_to_a_named_person(self, acme):
        wid = start(acme)
        run_attempts(wid)

        reply = operate(
            signed_in("olga"), wid, "reassign", from_user="bob", to_user="victor", reason="leave"
        )

        assert reply.status_code == 302
        (moved,) = events_of(wid, "TaskReassigned")
        assert (moved.payload["from_user"], moved.payload["to_user"]) == ("bob", "victor")
        assert moved.payload["comment"] == "leave" and moved.payload["actor"] == "olga"
        assert set(
            PendingTask.objects.filter(workflow_id=wid).values_list("assignee__username", flat=True)
        ) == {"victor"}

    def test_retry_a_step_that_failed_for_good(self, acme):
        DOWN.add("ops_book")
        wid = start(acme)
        assert run_attempts(wid) == "ROLLED_BACK"
        DOWN.clear()

        reply = operate(signed_in("olga"), wid, "retry_step", reason="the booking system is back")

        assert reply.status_code == 302
        (retried,) = events_of(wid, "StepRetried")
        assert retried.payload == {
            "type": "StepRetried",
            "v": 1,
            "actor": "olga",
            "reason": "the booking system is back",
            "step": "book",
            "from_step": "reserve",
        }
        assert run_attempts(wid) == "RUNNING"
        assert ActivityAttempt.objects.filter(workflow_id=wid, step="book", round=2).exists()
        assert Workflow.objects.get(pk=wid).public_status == "PENDING_MANAGER"

    def test_retry_a_failed_roll_back_then_it_completes(self, acme):
        DOWN.update({"ops_book", "ops_release"})
        wid = start(acme)
        assert run_attempts(wid) == "COMPENSATION_FAILED"
        DOWN.clear()

        reply = operate(signed_in("olga"), wid, "retry_compensation", reason="release fixed")

        assert reply.status_code == 302
        assert Workflow.objects.get(pk=wid).status == "COMPENSATING"
        assert events_of(wid, "CompensationRetried")[0].payload["reason"] == "release fixed"
        assert run_attempts(wid) == "ROLLED_BACK"
        undo = ActivityAttempt.objects.filter(workflow_id=wid, undo=True).order_by("attempt")
        assert [a.outcome for a in undo] == ["ConnectionError", "ConnectionError", "ok"]

    def test_settle_a_failed_roll_back_by_hand(self, acme):
        DOWN.update({"ops_book", "ops_release"})
        wid = start(acme)
        run_attempts(wid)

        reply = operate(signed_in("olga"), wid, "resolve", reason="released in the ERP by hand")

        assert reply.status_code == 302
        wf = Workflow.objects.get(pk=wid)
        assert (wf.status, wf.public_status) == ("ROLLED_BACK", "ROLLED_BACK")
        event = last_event(wid)
        assert event.type == "CompensationResolved" and event.role == "admin"
        assert event.payload["reason"] == "released in the ERP by hand"

    def test_rearm_a_parked_timer(self, acme):
        wid = start(acme)
        run_attempts(wid)
        timer = Timer.objects.get(workflow_id=wid, kind="deadline")
        # arrange: parked, as the poller leaves a timer whose delivery failed 10 times
        Timer.objects.filter(pk=timer.pk).update(
            dead_at=clock.now(), failures=10, last_error="OperationalError: gone"
        )

        reply = operate(signed_in("olga"), wid, "rearm", timer=timer.pk, reason="db is back")

        assert reply.status_code == 302
        timer.refresh_from_db()
        assert (timer.dead_at, timer.failures, timer.last_error) == (None, 0, "")
        assert timer.fire_at <= clock.now()
        event = last_event(wid)
        assert (event.type, event.payload["key"], event.payload["reason"]) == (
            "TimerRearmed",
            timer.key,
            "db is back",
        )

    @pytest.mark.parametrize(
        ("operation", "fields", "status", "text"),
        [
            ("cancel", {"reason": ""}, 400, "This field is required"),
            ("reassign", {"from_user": "bob", "to_user": "alice", "reason": "x"}, 409, "submit"),
            ("reassign", {"from_user": "bob", "to_user": "nobody", "reason": "x"}, 409, "nobody"),
            ("retry_step", {"reason": "x"}, 409, "cannot be done"),
            ("resolve", {"reason": "x"}, 409, "cannot be done"),
        ],
        ids=["no-reason", "to-submitter", "unknown-person", "not-failed", "not-stuck"],
    )
    def test_a_refused_operation_says_why_and_changes_nothing(
        self, acme, operation, fields, status, text
    ):
        wid = start(acme)
        run_attempts(wid)
        before = Workflow.objects.get(pk=wid).version
        client = signed_in("olga")
        page = client.get(f"/admin/approvals/workflow/{wid}/operations/")
        body = {"operation": operation, f"{operation}-request_id": "admin-r1"}
        body.update({f"{operation}-{k}": v for k, v in fields.items()})

        reply = client.post(f"/admin/approvals/workflow/{wid}/operations/", body)

        assert page.status_code == 200
        assert reply.status_code == status, reply.content[:500]
        assert text in reply.content.decode()
        assert Workflow.objects.get(pk=wid).version == before

    @pytest.mark.parametrize("who", ["audrey", "fiona", "bob"], ids=["auditor", "finance", "emp"])
    def test_only_organisation_admins_operate(self, acme, who):
        wid = start(acme)
        run_attempts(wid)
        before = Workflow.objects.get(pk=wid).version
        client = signed_in(who)

        reply = client.post(
            f"/admin/approvals/workflow/{wid}/operations/",
            {"operation": "cancel", "cancel-request_id": "r", "cancel-reason": "x"},
        )

        assert reply.status_code in (302, 403)  # 302: to the admin's sign-in
        assert Workflow.objects.get(pk=wid).version == before


# -- no admin form edits a row ------------------------------------------------------------

ROWS = {
    "workflow": lambda wid: Workflow.objects.get(pk=wid),
    "pendingtask": lambda wid: PendingTask.objects.get(workflow_id=wid),
    "timer": lambda wid: Timer.objects.filter(workflow_id=wid).first(),
    "activityattempt": lambda wid: ActivityAttempt.objects.filter(workflow_id=wid).first(),
}


def _state(wid: str) -> list[Any]:
    return [
        list(Workflow.objects.filter(pk=wid).values()),
        list(WorkflowEvent.objects.filter(workflow_id=wid).values()),
        list(PendingTask.objects.filter(workflow_id=wid).values()),
        list(Timer.objects.filter(workflow_id=wid).values()),
        list(ActivityAttempt.objects.filter(workflow_id=wid).values()),
    ]


@pytest.mark.parametrize("who", ["olga", "admin"], ids=["org-admin", "superuser"])
@pytest.mark.parametrize("model", sorted(ROWS), ids=sorted(ROWS))
def test_no_admin_form_changes_adds_or_deletes_a_row(acme, who, model):
    wid = start(acme)
    run_attempts(wid)
    row = ROWS[model](wid)
    before = _state(wid)
    client = signed_in(who)
    base = f"/admin/approvals/{model}/"
    forged = {"status": "COMPLETED", "step": "x", "assignee": 1, "key": "x", "outcome": "ok"}

    changed = client.post(f"{base}{row.pk}/change/", forged)
    added = client.post(f"{base}add/", forged)
    deleted = client.post(f"{base}{row.pk}/delete/", {"post": "yes"})

    assert changed.status_code == 403
    assert added.status_code == 403
    assert deleted.status_code == 403
    assert _state(wid) == before


@pytest.mark.parametrize("who", ["olga", "admin"], ids=["org-admin", "superuser"])
def test_the_event_inline_cannot_be_edited(acme, who):
    wid = start(acme)
    run_attempts(wid)
    event = WorkflowEvent.objects.filter(workflow_id=wid).first()
    assert event is not None
    before = _state(wid)

    reply = signed_in(who).post(
        f"/admin/approvals/workflow/{wid}/change/",
        {
            "events-TOTAL_FORMS": "1",
            "events-INITIAL_FORMS": "1",
            "events-0-id": event.pk,
            "events-0-type": "Forged",
            "events-0-DELETE": "on",
        },
    )

    assert reply.status_code == 403
    assert _state(wid) == before
