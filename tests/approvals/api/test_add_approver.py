"""POST /api/workflows/{id}/approvers: an organisation admin adds an approver to the
step a request waits in, as the admin page's "Add an approver" does, through the same
service and command. The person then finds the task in their inbox (their stand-in
does while they are away); a repeated requestId is recorded once; every refusal is a
4xx in the one error envelope, and changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from approvals.models import Tenant, User, Workflow, WorkflowEvent
from approvals.notifications.models import MailMessage
from approvals.services.workflows import workflow_cancel

from ..helpers import decide
from ..operations.test_add_approver import history, holders, signed_in, start, stuck
from .test_tasks_standing_in import DAY, _away

pytestmark = pytest.mark.django_db

URL = "/api/workflows/{wid}/approvers"


def body(**fields: Any) -> dict[str, Any]:
    return {
        "requestId": "add-1",
        "person": "victor",
        "step": "manager",
        "reason": "Bob left; Victor approves his team's",
        **fields,
    }


def add(client: Any, wid: str, payload: Any) -> Any:
    return client.post(URL.format(wid=wid), payload, format="json")


def changes(wid: str) -> tuple[Any, ...]:
    """What a refused addition must leave as it was."""
    status = Workflow.objects.get(pk=wid).status
    mails = MailMessage.objects.filter(workflow_id=wid).count()
    return history(wid), holders(wid), status, mails


def inbox(client: Any) -> list[dict[str, Any]]:
    reply = client.get("/api/me/tasks")
    assert reply.status_code == 200, reply.content
    return reply.json()["items"]


def test_the_admin_adds_an_approver_who_then_finds_and_finishes_the_task(acme, api):
    wid = stuck(acme)
    victor = api("victor")
    assert [i["workflowId"] for i in inbox(victor)] == []

    reply = add(api("olga"), wid, body())

    assert reply.status_code == 200, reply.content
    assert reply.json() == {"status": "PENDING_MANAGER", "version": 3, "duplicate": False}
    event = WorkflowEvent.objects.filter(workflow_id=wid).latest("seq")
    assert (event.type, event.role) == ("ApproverAdded", "admin")
    assert event.actor == User.objects.get(username="olga")
    assert event.payload["user"] == "victor"
    assert event.payload["reason"] == "Bob left; Victor approves his team's"
    # the task is in Victor's inbox through the API, his own (on nobody's behalf)
    items = inbox(victor)
    assert [(i["workflowId"], i["step"], i["onBehalfOf"]) for i in items] == [
        (wid, "manager", None)
    ]
    assert decide(victor, wid, "approve", "v-1").status_code == 200
    assert Workflow.objects.get(pk=wid).status == "COMPLETED"


def test_a_repeated_request_id_is_recorded_once(acme, api):
    wid = stuck(acme)
    olga = api("olga")

    first = add(olga, wid, body())
    again = add(olga, wid, body())

    assert first.status_code == again.status_code == 200
    assert first.json()["duplicate"] is False and again.json()["duplicate"] is True
    assert first.json()["version"] == again.json()["version"]
    assert [t for _, t in history(wid)].count("ApproverAdded") == 1
    assert MailMessage.objects.filter(workflow_id=wid, recipient__username="victor").count() == 1
    # the same id for another addition is refused, not taken for the first one
    before = changes(wid)
    other = add(olga, wid, body(person="ivan"))
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "REQUEST_ID_REUSED"
    assert changes(wid) == before


def test_an_added_approver_who_is_away_has_the_task_go_to_their_stand_in(acme, api):
    wid = stuck(acme)
    _away("victor", "ivan", starts=-DAY, ends=3 * DAY)

    reply = add(api("olga"), wid, body())

    assert reply.status_code == 200, reply.content
    added = WorkflowEvent.objects.filter(workflow_id=wid, type="ApproverAdded").get()
    assert added.payload["assignments"] == [{"user": "ivan", "slot": 0, "on_behalf_of": "victor"}]
    # Ivan holds it for Victor, as when a step is entered while someone is away
    assert [(i["workflowId"], i["onBehalfOf"]) for i in inbox(api("ivan"))] == [(wid, "victor")]
    assert inbox(api("victor")) == []
    mail = MailMessage.objects.get(workflow_id=wid, recipient__username="ivan")
    assert mail.kind == "task_assigned" and "Olga asked you to approve" in str(mail.context)
    assert not MailMessage.objects.filter(workflow_id=wid, recipient__username="victor").exists()
    # Ivan's inbox page shows Olga's reason; the request's page who holds it for whom
    ivan = signed_in("ivan")
    assert "Olga&#x27;s note: Bob left; Victor approves" in ivan.get("/").content.decode()
    timeline = ivan.get(f"/workflows/{wid}").content.decode()
    assert (
        "Olga added Victor as an approver on the Manager approval step: Bob left; Victor "
        "approves his team&#x27;s (Ivan holds the task for Victor, who is away)" in timeline
    )
    assert decide(api("ivan"), wid, "approve", "i-1").status_code == 200
    decided = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").get()
    assert decided.payload["on_behalf_of"] == "victor"
    assert Workflow.objects.get(pk=wid).status == "COMPLETED"


def _globex_person() -> None:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    User.objects.create_user("gina", password="pw", tenant=globex)


REFUSED = [
    # (stuck?, body or raw text, status, code, words)
    ("unknown-person", body(person="zoe"), 422, "UNKNOWN_USER", "zoe is not an active member"),
    ("other-org", body(person="gina"), 422, "UNKNOWN_USER", "gina is not an active member"),
    ("inactive", body(person="bob"), 422, "CANNOT_HOLD_TASKS", "deactivated"),
    ("auditor", body(person="audrey"), 422, "CANNOT_HOLD_TASKS", "auditor"),
    ("integration", body(person="erp"), 422, "CANNOT_HOLD_TASKS", "another system"),
    ("submitter", body(person="alice"), 403, "SEGREGATION_OF_DUTIES", "submitter"),
    ("self", body(person="olga"), 403, "FORBIDDEN", "You may not add yourself"),
    ("other-step", body(step="finance"), 409, "NOT_ALLOWED", "does not wait in the Finance step"),
    ("blank-reason", body(reason="   "), 422, "REASON_REQUIRED", "Say why"),
    ("empty-reason", body(reason=""), 400, "VALIDATION_ERROR", "reason:"),
    ("long-reason", body(reason="x" * 1001), 400, "VALIDATION_ERROR", "reason:"),
    ("no-person", {"requestId": "a", "step": "manager", "reason": "x"}, 400, "", "person:"),
    ("no-step", {"requestId": "a", "person": "victor", "reason": "x"}, 400, "", "step:"),
    ("no-reason", {"requestId": "a", "person": "victor", "step": "manager"}, 400, "", "reason:"),
    ("no-request-id", {"person": "victor", "step": "manager", "reason": "x"}, 400, "", "requestId"),
    ("person-number", body(person=7), 400, "VALIDATION_ERROR", "person: Must be a string"),
    ("reason-list", body(reason=["x"]), 400, "VALIDATION_ERROR", "reason: Must be a string"),
    ("step-null", body(step=None), 400, "VALIDATION_ERROR", "step:"),
    ("request-id-number", body(requestId=12), 400, "VALIDATION_ERROR", "requestId"),
    ("not-an-object", ["victor"], 400, "", ""),
    ("malformed", '{"person": "victor",', 400, "MALFORMED_JSON", "not valid JSON"),
]


@pytest.mark.parametrize(
    ("payload", "status", "code", "words"),
    [r[1:] for r in REFUSED],
    ids=[r[0] for r in REFUSED],
)
def test_each_bad_addition_is_refused_in_words_and_changes_nothing(
    acme, api, payload, status, code, words
):
    _globex_person()
    wid = stuck(acme)
    before = changes(wid)
    olga = api("olga")

    if isinstance(payload, str):
        reply = olga.post(URL.format(wid=wid), payload, content_type="application/json")
    else:
        reply = add(olga, wid, payload)

    assert reply.status_code == status, reply.content
    error = reply.json()["error"]
    assert error["code"] == (code or "VALIDATION_ERROR")
    assert words in error["message"]
    assert changes(wid) == before


def test_someone_who_already_holds_a_task_on_the_step_is_refused(acme, api):
    wid = start(acme)  # Bob holds it and can act
    before = changes(wid)

    reply = add(api("olga"), wid, body(person="bob"))

    assert reply.status_code == 409
    assert reply.json()["error"] == {
        "code": "ALREADY_ASSIGNED",
        "message": "bob already holds an open task on the Manager approval step",
        "requestId": "add-1",
    }
    assert changes(wid) == before


def test_a_finished_request_is_refused(acme, api):
    wid = stuck(acme)
    workflow_cancel(
        user=User.objects.get(username="olga"), workflow_id=wid, reason="gone", request_id="c"
    )
    before = changes(wid)

    reply = add(api("olga"), wid, body())

    assert reply.status_code == 409
    assert reply.json()["error"]["code"] == "WORKFLOW_FINISHED"
    assert changes(wid) == before


@pytest.mark.parametrize(
    ("who", "status"),
    [("alice", 403), ("bob", 403), ("audrey", 403), ("victor", 404), ("fiona", 404)],
)
def test_only_an_organisation_admin_may_add_an_approver(acme, api, who, status):
    wid = start(acme)
    before = changes(wid)

    reply = add(api(who), wid, body(person="ivan"))

    assert reply.status_code == status, reply.content
    error = reply.json()["error"]
    assert error["code"] == ("FORBIDDEN" if status == 403 else "NOT_FOUND")
    if status == 403:
        assert error["message"] == "Only an organisation admin may add an approver to a request."
    assert changes(wid) == before


def test_another_organisations_admin_does_not_find_the_request(acme, api):
    from django.contrib.auth.models import Group

    from approvals.access import Role

    wid = stuck(acme)
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gail = User.objects.create_user("gail", password="pw", tenant=globex)
    gail.groups.add(Group.objects.get(name=Role.ORG_ADMIN.value))
    before = changes(wid)

    for target in (wid, "not-a-uuid"):
        reply = add(api("gail"), target, body())
        assert reply.status_code == 404
        assert reply.json()["error"]["code"] == "NOT_FOUND"
    assert changes(wid) == before


def test_the_schema_describes_the_endpoint(acme, api):
    schema = json.loads(api("olga").get("/api/schema/?format=json").content)
    operation = schema["paths"]["/api/workflows/{workflow_id}/approvers"]["post"]
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    shape = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert sorted(shape["required"]) == ["person", "reason", "requestId", "step"]
    assert shape["properties"]["reason"]["maxLength"] == 1000
    assert {"200", "400", "403", "404", "409", "422"} <= set(operation["responses"])
