"""The API's held decisions: ``"hold": true`` answers 202 and records nothing until the
window has passed, DELETE undoes it inside the window and is refused after it, the plain
decision stays immediate, and another holder's decision is refused while one is held.
The OpenAPI schema names the parameter and the held decision's path."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from approvals import clock
from approvals.models import User, WorkflowEvent
from approvals.services import held_decisions as held
from approvals.services.workflows import workflow_decide
from tests.approvals.pages.support import expense_started

pytestmark = pytest.mark.django_db

PAST_THE_WINDOW = dt.timedelta(seconds=held.undo_seconds() + 1)


def _decided(wid: str) -> list[str]:
    events = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
    return [e.request_id for e in events.order_by("seq")]


def _decide(client: Any, wid: str, rid: str, **more: Any) -> Any:
    body = {"decision": "approve", "requestId": rid, "comment": "", **more}
    return client.post(f"/api/workflows/{wid}/decisions", body, format="json")


def test_a_held_decision_is_recorded_once_after_the_window(acme: Any, api: Any) -> None:
    wid = expense_started("E-api-held")
    bob = api("bob")

    answer = _decide(bob, wid, "api-held-1", hold=True)
    again = _decide(bob, wid, "api-held-1", hold=True)

    assert answer.status_code == 202, answer.content
    assert answer.json()["state"] == "held"
    assert answer["Location"] == f"/api/workflows/{wid}/held/api-held-1"
    assert again.status_code == 202
    assert _decided(wid) == []
    with clock.shifted(PAST_THE_WINDOW):
        held.held_release_due()
    assert _decided(wid) == ["api-held-1"]
    assert bob.get(answer["Location"]).json()["state"] == "recorded"


def test_undo_inside_the_window_records_nothing_and_after_it_is_refused(
    acme: Any, api: Any
) -> None:
    wid = expense_started("E-api-undo")
    bob = api("bob")
    where = _decide(bob, wid, "api-undo-1", hold=True)["Location"]

    undone = bob.delete(where)
    with clock.shifted(PAST_THE_WINDOW):
        held.held_release_due()
    where = _decide(bob, wid, "api-undo-2", hold=True)["Location"]
    with clock.shifted(PAST_THE_WINDOW):
        held.held_release_due()
        late = bob.delete(where)

    assert undone.status_code == 200 and undone.json()["state"] == "undone"
    assert late.status_code == 409
    assert late.json()["error"] == {
        "code": held.TOO_LATE,
        "message": held.TOO_LATE_RECORDED,
        "requestId": late.json()["error"]["requestId"],
    }
    assert _decided(wid) == ["api-undo-2"]


def test_the_plain_decision_stays_immediate(acme: Any, api: Any) -> None:
    wid = expense_started("E-api-plain")

    answer = _decide(api("bob"), wid, "api-plain-1")

    assert answer.status_code == 200
    assert _decided(wid) == ["api-plain-1"]


def test_while_one_is_held_another_holders_hold_is_refused_and_a_plain_one_wins(
    acme: Any, api: Any
) -> None:
    wid = expense_started("E-api-two")
    bob = User.objects.get(username="bob")
    workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="api-two-0")
    # now with finance: fiona and farah
    where = _decide(api("fiona"), wid, "api-two-1", hold=True)["Location"]

    holding = _decide(api("farah"), wid, "api-two-2", hold=True)
    plain = _decide(api("farah"), wid, "api-two-3")
    with clock.shifted(PAST_THE_WINDOW):
        held.held_release_due()

    assert holding.status_code == 409
    assert holding.json()["error"]["code"] == held.BEING_DECIDED
    assert holding.json()["error"]["message"].startswith(
        "Fiona is deciding: approves in a few seconds."
    )
    assert plain.status_code == 200
    assert _decided(wid) == ["api-two-0", "api-two-3"]  # once each, fiona's not at all
    refused = api("fiona").get(where).json()
    assert refused["state"] == "refused" and refused["reason"]


@pytest.mark.parametrize(
    "more",
    [
        {"decision": "delegate", "delegateTo": "farah"},
        {"data": {"amountPaise": 1}},
    ],
)
def test_only_a_plain_approve_reject_or_send_back_is_held(
    acme: Any, api: Any, more: dict[str, Any]
) -> None:
    wid = expense_started("E-api-not-held")

    answer = _decide(api("bob"), wid, "api-not-held", hold=True, **more)

    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == held.NOT_HOLDABLE
    assert _decided(wid) == []


def test_nothing_held_is_a_404_in_the_envelope(acme: Any, api: Any) -> None:
    wid = expense_started("E-api-none")

    answer = api("bob").delete(f"/api/workflows/{wid}/held/nothing-here")

    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == held.NOTHING_HELD_TEXT


def test_the_schema_documents_hold_and_the_held_decision(acme: Any, api: Any) -> None:
    schema = api("bob").get("/api/schema/", HTTP_ACCEPT="application/json").json()

    body = schema["components"]["schemas"]["DecisionRequest"]["properties"]
    assert body["hold"]["type"] == "boolean"
    assert "202" in schema["paths"]["/api/workflows/{workflow_id}/decisions"]["post"]["responses"]
    path = schema["paths"]["/api/workflows/{workflow_id}/held/{request_id}"]
    assert set(path) >= {"get", "delete"}
