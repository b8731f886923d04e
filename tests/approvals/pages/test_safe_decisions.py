"""Decisions from the pages without JavaScript: a rejection or a send-back without a
reason is refused with a sentence and records nothing; a rejection asks first on a
confirmation page naming the request, and only the confirmed post records it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.messages import get_messages

from approvals.models import WorkflowEvent
from approvals.pages.common import REASON_TEXTS

from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db


def _decisions(wid: str) -> list[str]:
    events = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
    return [e.payload["decision"] for e in events]


@pytest.mark.parametrize("decision", ["reject", "send_back"])
def test_a_page_decision_without_a_reason_is_refused_with_a_sentence(
    acme: Any, decision: str
) -> None:
    wid = expense_started("R-1")
    bob = signed_in("bob")

    answer = bob.post(
        f"/workflows/{wid}/decide",
        {"decision": decision, "request_id": "r-1", "comment": " ", "next": "/"},
    )

    assert answer.status_code == 302
    assert [str(m) for m in get_messages(answer.wsgi_request)] == [REASON_TEXTS[decision]]
    assert _decisions(wid) == []


def test_the_inbox_script_is_told_422_without_a_reason(acme: Any) -> None:
    wid = expense_started("R-2")

    answer = signed_in("bob").post(
        f"/workflows/{wid}/decide",
        {"decision": "reject", "request_id": "r-2", "confirmed": "yes"},
        HTTP_ACCEPT="application/json",
    )

    assert answer.status_code == 422
    assert answer.json() == {"ok": False, "message": REASON_TEXTS["reject"], "status": ""}
    assert _decisions(wid) == []


def test_a_rejection_asks_on_a_page_naming_the_request_before_it_records(acme: Any) -> None:
    wid = expense_started("R-8")
    signed_in("bob").post(f"/workflows/{wid}/decide", {"decision": "approve", "request_id": "b"})
    fiona = signed_in("fiona")  # the Finance step: a rejection there ends the request
    posted = {"decision": "reject", "request_id": "r-8", "comment": "No receipt", "next": "/"}

    asked = fiona.post(f"/workflows/{wid}/decide", posted)

    assert asked.status_code == 200
    page = asked.content.decode()
    assert "Reject Expense claim R-8 from Alice, ₹45,000.00? This ends the request." in page
    assert 'name="confirmed" value="yes"' in page and "No receipt" in page
    assert ">Reject (ends the request)</button>" in page
    assert _decisions(wid) == ["approve"]

    done = fiona.post(f"/workflows/{wid}/decide", {**posted, "confirmed": "yes"}, follow=True)

    assert _decisions(wid) == ["approve", "reject"]
    assert "Rejected Expense claim R-8; the request ends." in done.content.decode()


def test_a_rejection_that_goes_back_is_offered_and_recorded_as_a_send_back(acme: Any) -> None:
    wid = expense_started("R-7")
    bob = signed_in("bob")  # the Manager step sends a rejection back to Alice

    page = bob.get(f"/workflows/{wid}").content.decode()
    done = bob.post(
        f"/workflows/{wid}/decide",
        {"decision": "reject", "request_id": "r-7", "comment": "No receipt"},
        follow=True,
    )

    assert ">Send back to Alice</button>" in page and ">Reject" not in page
    assert _decisions(wid) == ["reject"]  # nothing to confirm: Alice can resubmit
    text = done.content.decode()
    assert "Sent Expense claim R-7 back to Alice." in text
    assert "Bob sent the request back to Alice from the Manager step" in text


def test_the_comment_box_is_a_textarea_so_enter_adds_a_line(acme: Any) -> None:
    wid = expense_started("R-3")

    inbox = signed_in("bob").get("/").content.decode()
    detail = signed_in("bob").get(f"/workflows/{wid}").content.decode()

    assert '<textarea id="comment-' in inbox and 'name="comment" placeholder' not in inbox
    assert '<textarea id="decision-comment" name="comment"' in detail
