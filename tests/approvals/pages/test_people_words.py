"""What an employee reads is in people's words: the request page of a workflow that was
rejected and undone, and of one whose automated step failed, and the refusals of a
decision, show no workflow template key, step id, user name, group key, amount in minor
units or exception name."""

from __future__ import annotations

import html
import re
import uuid
from typing import Any

import pytest

from approvals.models import OrgGroup, User
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_decide, workflow_start

from ..helpers import run_activities
from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db

# Reserve the budget, then the IT admins decide; a rejection ends it and undoes
# the reservation.
LAPTOP: dict[str, Any] = {
    "key": "laptop-order",
    "title": "Laptop order",
    "summary": "{item}, {amountPaise}",
    "schema": {
        "type": "object",
        "properties": {
            "amountPaise": {"type": "integer", "x-money": {"currency": "currency"}},
            "currency": {"type": "string", "enum": ["INR", "USD"]},
            "item": {"type": "string"},
        },
    },
    "steps": [
        {
            "id": "reserve_budget",
            "kind": "action",
            "activity": "reserve_budget",
            "compensate": {"activity": "release_budget"},
            "retry": {"max_attempts": 1},
        },
        {"id": "it_review", "kind": "approval", "approvers": [{"group": "it-admins"}]},
    ],
}
# Engine words an employee must never read; user names are lower case, people's names
# are written with a capital (an @name is how a comment mentions someone: allowed).
ENGINE_WORDS = re.compile(
    r"(?<!@)\b(alice|bob|fiona|farah|victor|reserve_budget|it_review|it-admins|laptop-order"
    r"|expense-approval)\b|paise|[0-9]{7,}|Exceeded|Error\b|Exception|NoApprovers"
    r"|Rolled back|Rolling back|rolled back"
)


def visible_text(page: str) -> str:
    """A page's text as a person sees it: no tags, scripts, styles or attributes."""
    main = page.split("<main", 1)[-1]
    main = re.sub(r"<(script|style)\b.*?</\1>", " ", main, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", main))


def assert_people_words(text: str) -> None:
    found = ENGINE_WORDS.search(text)
    assert found is None, (found, text[max(0, found.start() - 200) : found.end() + 200])


def laptop(acme: Any, amount: int) -> str:
    it = OrgGroup.objects.get(tenant=acme, key="it-admins")  # named "IT admins"
    it.members.add(User.objects.get(username="fiona"))
    workflow_template_publish(tenant=acme, definition=LAPTOP)
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="laptop-order",
        subject_type="laptop",
        subject_id="L-one",
        data={"amountPaise": amount, "currency": "INR", "item": "ThinkPad"},
    )
    return str(started.workflow_id)


def test_a_rejected_and_undone_request_reads_in_words(acme: Any) -> None:
    wid = laptop(acme, 9_000_000)
    run_activities(wid)
    workflow_decide(
        user=User.objects.get(username="fiona"),
        workflow_id=wid,
        decision="reject",
        request_id="f",
        comment="Use the spare one",
    )
    run_activities(wid)

    text = visible_text(signed_in("alice").get(f"/workflows/{wid}").content.decode())

    assert "Undoing the steps already done, as the request was rejected" in text
    assert "IT admins group" in text
    assert "₹90,000.00" in text
    assert_people_words(text)


def test_a_failed_request_reads_in_words(acme: Any) -> None:
    wid = laptop(acme, 1_500_000_000)  # more than reserve_budget allows
    run_activities(wid)

    text = visible_text(signed_in("alice").get(f"/workflows/{wid}").content.decode())

    assert (
        "The Reserve budget step did not pass: "
        "₹1,50,00,000.00 is more than the department's budget allows" in text
    )
    assert "Could not be completed" in text
    assert "₹1,50,00,000.00" in text
    assert_people_words(text)


def _decide(username: str, wid: str, **post: str) -> str:
    client = signed_in(username)
    response = client.post(
        f"/workflows/{wid}/decide",
        {"request_id": uuid.uuid4().hex, **post},
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code >= 400, response.content
    return str(response.json()["message"])


def test_refusals_of_a_hand_over_read_in_words(acme: Any) -> None:
    wid = expense_started("E-words")

    to_submitter = _decide("bob", wid, decision="delegate", delegate_to="alice")
    to_nobody = _decide("bob", wid, decision="delegate", delegate_to="x")

    assert to_submitter == (
        "Alice submitted this request, and nobody may approve their own request: "
        "hand it to someone else."
    )
    assert "You submitted" not in to_submitter
    assert "no user" not in to_nobody and "'x'" not in to_nobody
    for message in (to_submitter, to_nobody):
        assert_people_words(message)


def test_the_submitters_own_decision_and_a_send_back_read_in_words(acme: Any) -> None:
    wid = expense_started("E-words-2")
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=wid,
        decision="send_back",
        request_id="sb",
        comment="Add the bill",
    )

    text = visible_text(signed_in("alice").get(f"/workflows/{wid}").content.decode())

    assert "Submitter step" not in text
    assert_people_words(text)


def test_a_send_back_from_the_page_says_who_it_is_back_with(acme: Any) -> None:
    wid = expense_started("E-words-3")

    response = signed_in("bob").post(
        f"/workflows/{wid}/decide",
        {
            "request_id": uuid.uuid4().hex,
            "decision": "send_back",
            "comment": "Add the bill",
        },
        HTTP_ACCEPT="application/json",
    )

    assert response.status_code == 200, response.content
    message = str(response.json()["message"])
    assert message.endswith("It is back with the requester for changes.")
    assert "Submitter step" not in message
    assert_people_words(message)
