"""POST /api/workflows/{id}/comments: a comment is recorded once per requestId in the
request's history, by anyone who may read the request but an auditor; a text outside
the limits, or a mention of someone who cannot see the request, records nothing."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.access import FORBIDDEN_AUDITOR
from approvals.models import WorkflowEvent
from approvals.services.comments import MENTION_CANNOT_READ, MENTION_UNKNOWN
from templates_engine.comments import COMMENT_EMPTY

from ..helpers import decide, start_expense
from .test_bad_input import globex  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db

RS_45_000 = 4_500_000  # the manager, then finance


def _started(api: Any) -> str:
    started = start_expense(api("alice"), RS_45_000, description="Hotel in Pune")
    assert started.status_code == 201, started.content
    return str(started.json()["workflowId"])


def _comment(client: Any, wid: str, text: str, request_id: str) -> Any:
    body = {"text": text, "requestId": request_id}
    return client.post(f"/api/workflows/{wid}/comments", body, format="json")


def _comments(wid: str) -> list[dict[str, Any]]:
    return [
        e.payload
        for e in WorkflowEvent.objects.filter(workflow_id=wid, type="CommentAdded").order_by("seq")
    ]


def test_a_comment_is_recorded_once_per_request_id(acme, api):
    wid = _started(api)

    first = _comment(api("bob"), wid, "Which hotel was it?", "c-1")
    again = _comment(api("bob"), wid, "Which hotel was it?", "c-1")

    assert first.status_code == 200, first.content
    assert first.json()["duplicate"] is False
    assert first.json()["status"] == "PENDING_MANAGER"
    assert again.status_code == 200
    assert again.json()["duplicate"] is True
    assert again.json()["version"] == first.json()["version"]
    assert _comments(wid) == [
        {
            "type": "CommentAdded",
            "v": 1,
            "actor": "bob",
            "comment": "Which hotel was it?",
            "mentions": [],
        }
    ]


def test_the_comment_is_in_the_requests_history(acme, api):
    wid = _started(api)
    _comment(api("alice"), wid, "The bill is on its way.", "c-2")

    history = api("bob").get(f"/api/workflows/{wid}").json()["history"]

    entry = history[-1]
    assert entry["type"] == "CommentAdded"
    assert entry["comment"] == "The bill is on its way."


def test_a_comment_on_a_finished_request_is_recorded(acme, api):
    wid = _started(api)
    rejected = decide(api("bob"), wid, "reject", "bob-r")
    assert rejected.status_code == 200, rejected.content

    response = _comment(api("alice"), wid, "Why was this refused?", "c-3")

    assert response.status_code == 200, response.content
    assert len(_comments(wid)) == 1


def test_another_organisations_request_is_not_found_and_nothing_is_recorded(globex, api):  # noqa: F811
    wid = globex["workflow_id"]
    before = WorkflowEvent.objects.filter(workflow_id=wid).count()

    response = _comment(api("alice"), wid, "hello", "c-4")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == before


def test_someone_who_may_not_read_the_request_is_told_it_is_not_found(acme, api):
    wid = _started(api)

    response = _comment(api("ivan"), wid, "hello", "c-5")

    assert response.status_code == 404
    assert _comments(wid) == []


def test_an_auditor_may_read_but_not_comment(acme, api):
    wid = _started(api)
    assert api("audrey").get(f"/api/workflows/{wid}").status_code == 200

    response = _comment(api("audrey"), wid, "Looks fine", "c-6")

    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "FORBIDDEN",
        "message": FORBIDDEN_AUDITOR,
        "requestId": "c-6",
    }
    assert _comments(wid) == []


@pytest.mark.parametrize(
    ("text", "status", "code"),
    [
        ("nul \x00 here", 400, "VALIDATION_ERROR"),
        ("x" * 2001, 400, "VALIDATION_ERROR"),
        ("", 400, "VALIDATION_ERROR"),
        ("   ", 422, "INVALID_COMMENT"),
    ],
    ids=["nul", "too-long", "empty", "blank"],
)
def test_a_comment_outside_the_limits_is_refused_and_nothing_is_recorded(
    acme, api, text, status, code
):
    wid = _started(api)

    response = _comment(api("bob"), wid, text, "c-7")

    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert _comments(wid) == []


def test_a_blank_comment_is_refused_with_a_sentence(acme, api):
    wid = _started(api)

    response = _comment(api("bob"), wid, " \n ", "c-8")

    assert response.json()["error"]["message"] == COMMENT_EMPTY


def test_a_comment_of_2000_characters_is_recorded(acme, api):
    wid = _started(api)

    response = _comment(api("bob"), wid, "y" * 2000, "c-9")

    assert response.status_code == 200, response.content


def test_a_mention_of_someone_who_cannot_see_the_request_is_refused_naming_them(acme, api):
    # given: ivan (IT) takes no part in alice's expense
    wid = _started(api)

    # when
    response = _comment(api("bob"), wid, "@ivan can you check the laptop?", "c-10")

    # then
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "MENTION_CANNOT_READ"
    assert error["message"] == MENTION_CANNOT_READ.format(names="Ivan", them="Ivan")
    assert error["message"] == (
        "Ivan cannot see this request, so the comment cannot mention Ivan; nothing was recorded."
    )
    assert _comments(wid) == []


def test_a_mention_of_nobody_is_refused(acme, api):
    wid = _started(api)

    response = _comment(api("bob"), wid, "@nobody-here hello", "c-11")

    assert response.status_code == 422
    assert response.json()["error"]["message"] == MENTION_UNKNOWN.format(name="nobody-here")
    assert _comments(wid) == []


def test_a_mention_of_someone_who_may_read_is_recorded_with_the_comment(acme, api):
    # given: olga, an organisation admin, reads every request
    wid = _started(api)

    response = _comment(api("bob"), wid, "@olga is this a duplicate?", "c-12")

    assert response.status_code == 200, response.content
    assert _comments(wid)[0]["mentions"] == ["olga"]
