"""An organisation admin deals with workflows from Django admin: cancel, reassign, start
a rolled-back request again as a new one, retry or settle by hand a failed roll-back,
re-arm a parked timer. Each goes through the command path and leaves an event with who
and why; a refused operation changes nothing; a finished request stays finished; and no
admin form edits a workflow, an event, a task or a timer."""

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
    body["confirmed"] = "yes"  # as the page's dialog sends it
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

    def test_reassign_finds_the_person_by_name_and_refuses_an_auditor_in_words(self, acme):
        wid = start(acme)
        run_attempts(wid)
        olga = signed_in("olga")

        auditor = operate(olga, wid, "reassign", from_user="bob", to_user="Audrey", reason="x")
        several = operate(olga, wid, "reassign", from_user="bob", to_user="F", reason="x")
        page = olga.get(f"/admin/approvals/workflow/{wid}/operations/").content.decode()
        by_name = operate(olga, wid, "reassign", from_user="bob", to_user="Vic", reason="x")

        assert auditor.status_code == 400 and "Audrey is an auditor" in auditor.content.decode()
        assert "Several people match" in several.content.decode()
        assert "Give it to (user name)" not in page and 'list="people-taking"' in page
        assert by_name.status_code == 302
        (moved,) = events_of(wid, "TaskReassigned")
        assert moved.payload["to_user"] == "victor"

    def test_a_rolled_back_request_starts_again_as_a_new_one_linked_both_ways(self, acme):
        DOWN.add("ops_book")
        wid = start(acme)
        assert run_attempts(wid) == "ROLLED_BACK"
        before = Workflow.objects.get(pk=wid)
        DOWN.clear()

        reply = operate(signed_in("olga"), wid, "retry_step", reason="the booking system is back")

        assert reply.status_code == 302
        old = Workflow.objects.get(pk=wid)
        assert (old.status, old.public_status) == ("ROLLED_BACK", "ROLLED_BACK")
        (restarted,) = events_of(wid, "WorkflowRestarted")
        new_id = restarted.payload["restarted_as"]
        assert restarted.payload["reason"] == "the booking system is back"
        assert restarted.role == "admin" and restarted.payload["actor"] == "olga"
        new = Workflow.objects.get(pk=new_id)
        assert (new.submitter, new.subject_id, new.data) == (old.submitter, "B-1", {})
        assert new.template_id == old.template_id  # the newest published version
        started = events_of(new_id, "WorkflowStarted")[0]
        assert started.payload["origin"] == {
            "restarted_from": wid,
            "made_by": "olga",
            "reason": "the booking system is back",
        }
        assert run_attempts(new_id) == "RUNNING"
        assert Workflow.objects.get(pk=new_id).public_status == "PENDING_MANAGER"
        # and the old one has no open work of its own
        assert not ActivityAttempt.objects.filter(workflow_id=wid, finished_at__isnull=True)
        assert old.version == before.version + 1

    def test_the_restart_links_show_in_the_api_and_on_both_pages(self, acme, api):
        DOWN.add("ops_book")
        wid = start(acme)
        run_attempts(wid)
        DOWN.clear()
        operate(signed_in("olga"), wid, "retry_step", reason="back")
        new_id = events_of(wid, "WorkflowRestarted")[0].payload["restarted_as"]

        old_answer = api("olga").get(f"/api/workflows/{wid}").json()
        new_answer = api("olga").get(f"/api/workflows/{new_id}").json()
        old_page = signed_in("alice").get(f"/workflows/{wid}").content.decode()
        new_page = signed_in("alice").get(f"/workflows/{new_id}").content.decode()

        assert (old_answer["restartedAs"], old_answer["restartedFrom"]) == (new_id, None)
        assert (new_answer["restartedFrom"], new_answer["restartedAs"]) == (wid, None)
        assert f'href="/workflows/{new_id}"' in old_page and "started again as" in old_page
        assert f'href="/workflows/{wid}"' in new_page and "in place of" in new_page

    def test_a_request_is_started_again_once(self, acme):
        DOWN.add("ops_book")
        wid = start(acme)
        run_attempts(wid)
        client = signed_in("olga")
        operate(client, wid, "retry_step", reason="back")
        count = Workflow.objects.count()

        page = client.get(f"/admin/approvals/workflow/{wid}/operations/")
        reply = client.post(
            f"/admin/approvals/workflow/{wid}/operations/",
            {
                "operation": "retry_step",
                "retry_step-request_id": "r2",
                "retry_step-reason": "x",
                "confirmed": "yes",
            },
        )

        assert "retry_step" not in [f.name for f in page.context["forms"]]
        assert reply.status_code == 409
        assert Workflow.objects.count() == count

    def test_the_same_restart_form_sent_twice_starts_one_new_request(self, acme):
        DOWN.add("ops_book")
        wid = start(acme)
        run_attempts(wid)
        client = signed_in("olga")
        body = {
            "operation": "retry_step",
            "retry_step-request_id": "restart-1",
            "retry_step-reason": "back",
            "confirmed": "yes",
        }
        count = Workflow.objects.count()

        first = client.post(f"/admin/approvals/workflow/{wid}/operations/", body)
        again = client.post(f"/admin/approvals/workflow/{wid}/operations/", body)

        assert first.status_code == 302
        assert again.status_code == 409  # the form is gone: it has been started again
        assert Workflow.objects.count() == count + 1
        assert len(events_of(wid, "WorkflowRestarted")) == 1

    def test_a_retried_roll_back_runs_on_the_finished_request_and_settles_it(self, acme):
        DOWN.update({"ops_book", "ops_release"})
        wid = start(acme)
        assert run_attempts(wid) == "COMPENSATION_FAILED"
        DOWN.clear()

        reply = operate(signed_in("olga"), wid, "retry_compensation", reason="release fixed")

        assert reply.status_code == 302
        assert Workflow.objects.get(pk=wid).status == "COMPENSATION_FAILED"
        assert events_of(wid, "UndoRetried")[0].payload["reason"] == "release fixed"
        assert run_attempts(wid) == "COMPENSATION_FAILED"  # finished stays finished
        undo = ActivityAttempt.objects.filter(workflow_id=wid, undo=True).order_by("attempt")
        assert [a.outcome for a in undo] == ["ConnectionError", "ConnectionError", "ok"]
        settled = last_event(wid)
        assert settled.type == "CompensationSettled" and settled.payload["by_hand"] is False
        assert Workflow.objects.get(pk=wid).snapshot["settled"] is True

    def test_a_retried_roll_back_that_fails_again_stays_on_the_attention_page(self, acme):
        DOWN.update({"ops_book", "ops_release"})
        wid = start(acme)
        run_attempts(wid)
        client = signed_in("olga")

        operate(client, wid, "retry_compensation", reason="try once more")
        assert run_attempts(wid) == "COMPENSATION_FAILED"

        assert not Workflow.objects.get(pk=wid).snapshot["settled"]
        assert wid in client.get("/admin/approvals/workflow/attention/").content.decode()
        forms = client.get(f"/admin/approvals/workflow/{wid}/operations/").context["forms"]
        assert {"retry_compensation", "resolve"} <= {f.name for f in forms}

    def test_settle_a_failed_roll_back_by_hand(self, acme):
        DOWN.update({"ops_book", "ops_release"})
        wid = start(acme)
        run_attempts(wid)
        client = signed_in("olga")
        assert wid in client.get("/admin/approvals/workflow/attention/").content.decode()

        reply = operate(client, wid, "resolve", reason="released in the ERP by hand")

        assert reply.status_code == 302
        wf = Workflow.objects.get(pk=wid)
        assert (wf.status, wf.public_status) == ("COMPENSATION_FAILED", "COMPENSATION_FAILED")
        event = last_event(wid)
        assert event.type == "CompensationSettled" and event.role == "admin"
        assert event.payload["reason"] == "released in the ERP by hand"
        assert event.payload["outcome"] == "ROLLED_BACK"
        # settled: nothing left for a person
        assert wid not in client.get("/admin/approvals/workflow/attention/").content.decode()
        forms = client.get(f"/admin/approvals/workflow/{wid}/operations/").context["forms"]
        assert not {"retry_compensation", "resolve"} & {f.name for f in forms}

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
            (
                "reassign",
                {"from_user": "bob", "to_user": "nobody", "reason": "x"},
                400,
                "Nobody here",
            ),
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
            {
                "operation": "cancel",
                "cancel-request_id": "r",
                "cancel-reason": "x",
                "confirmed": "yes",
            },
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
