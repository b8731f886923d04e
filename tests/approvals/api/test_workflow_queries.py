"""GET /api/workflows/{id} answers what a caller needs to act without reading the
history: the open steps with their assignees and due times, the next timer, and the
attempts of the running action step with their errors."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from approvals.activities import activity
from approvals.api.serializers import WorkflowDetail
from approvals.models import ActivityAttempt, User
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start
from approvals.workers.activities import attempt_run

from ..helpers import decide, start_expense

pytestmark = pytest.mark.django_db

PENDING_AMOUNT = 4_500_000  # manager, then finance
FLAKY_MESSAGE = "the ledger is down"


@activity("query_flaky")
def query_flaky(key: str, data: dict[str, Any]) -> None:
    raise ConnectionError(FLAKY_MESSAGE)


def _detail(client: Any, wid: str) -> dict[str, Any]:
    response = client.get(f"/api/workflows/{wid}")
    assert response.status_code == 200, response.content
    return response.json()


def _at(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


def test_an_open_approval_step_names_its_assignees_and_due_time(acme, api):
    # given an expense waiting on bob, with a two-day deadline and a reminder after one
    wid = start_expense(api("alice"), PENDING_AMOUNT).json()["workflowId"]

    # when
    detail = _detail(api("alice"), wid)

    # then
    [step] = detail["openSteps"]
    assert step["step"] == "manager"
    [bob] = step["assignees"]
    assert (bob["user"], bob["onBehalfOf"]) == ("bob", None)
    assert _at(bob["dueAt"]) - _at(bob["since"]) == dt.timedelta(days=2)
    timer = detail["nextTimer"]
    assert timer["step"] == "manager"
    assert timer["kind"] == "reminder"
    assert _at(timer["fireAt"]) - _at(bob["since"]) == dt.timedelta(days=1)
    assert detail["activity"] is None


def test_after_a_decision_the_next_step_is_open_and_the_first_is_not(acme, api):
    wid = start_expense(api("alice"), PENDING_AMOUNT).json()["workflowId"]
    assert decide(api("bob"), wid, "approve", "bob-1").status_code == 200

    detail = _detail(api("alice"), wid)

    assert [s["step"] for s in detail["openSteps"]] == ["finance"]
    assert [a["user"] for a in detail["openSteps"][0]["assignees"]] == ["farah", "fiona"]
    assert detail["nextTimer"]["step"] == "finance"


def test_a_finished_workflow_has_no_open_steps_and_no_timer(acme, api):
    wid = start_expense(api("alice"), 99_999).json()["workflowId"]  # approved at once

    detail = _detail(api("alice"), wid)

    assert detail["status"] == "APPROVED"
    assert (detail["openSteps"], detail["nextTimer"], detail["activity"]) == ([], None, None)


def test_the_running_action_step_shows_its_attempts_and_their_errors(acme, api):
    # given an action step whose first attempt failed and whose retry waits
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "ledger-post",
            "steps": [{"id": "post", "kind": "action", "activity": "query_flaky"}],
        },
    )
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="ledger-post",
        subject_type="ledger",
        subject_id="L-1",
        data={},
    )
    wid = str(started.workflow_id)
    first = ActivityAttempt.objects.get(workflow_id=wid, attempt=1)
    attempt_run(attempt_id=first.pk)

    # when
    detail = _detail(api("alice"), wid)

    # then
    running = detail["activity"]
    assert (running["step"], running["activity"], running["undo"], running["round"]) == (
        "post",
        "query_flaky",
        False,
        1,
    )
    assert running["idempotencyKey"] == f"{wid}/post"
    failed, retry = running["attempts"]
    assert (failed["attempt"], failed["outcome"], failed["error"]) == (
        1,
        "ConnectionError",
        "ConnectionError",
    )
    assert failed["message"] == FLAKY_MESSAGE
    assert failed["finishedAt"] is not None
    assert (retry["attempt"], retry["outcome"], retry["error"], retry["finishedAt"]) == (
        2,
        None,
        None,
        None,
    )
    assert _at(retry["notBefore"]) > _at(failed["finishedAt"])
    assert detail["openSteps"] == []


def test_the_answer_has_exactly_the_fields_its_schema_documents(acme, api):
    wid = start_expense(api("alice"), PENDING_AMOUNT).json()["workflowId"]
    schema = api("alice").get("/api/schema/", HTTP_ACCEPT="application/json").json()
    components = schema["components"]["schemas"]

    detail = _detail(api("alice"), wid)

    assert set(detail) == set(components["WorkflowDetail"]["properties"])
    assert set(detail) == set(WorkflowDetail().fields)
    assignee = detail["openSteps"][0]["assignees"][0]
    assert set(assignee) == set(components["OpenAssignmentOut"]["properties"])
    assert set(detail["nextTimer"]) == set(components["TimerOut"]["properties"])
    attempt_fields = set(components["AttemptOut"]["properties"])
    assert {"attempt", "outcome", "error", "message", "leaseUntil"} <= attempt_fields
