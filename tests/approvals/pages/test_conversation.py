"""The request page's conversation: a comment from the page is recorded and read in the
timeline as a sentence; a refused one shows the page again with the text kept and
nothing recorded; an auditor gets no form; the submitter withdraws a waiting request,
with a reason, and only they may."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from approvals.models import Workflow, WorkflowEvent
from approvals.pages.conversation import (
    COMMENT_ADDED,
    NOT_WITHDRAWABLE,
    WITHDRAW_REASON_MISSING,
)
from approvals.services.comments import MENTION_CANNOT_READ
from templates_engine.comments import COMMENT_NUL

from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db


def _comments(wid: str) -> list[str]:
    return [
        e.payload["comment"]
        for e in WorkflowEvent.objects.filter(workflow_id=wid, type="CommentAdded").order_by("seq")
    ]


def _post_comment(client, wid: str, text: str, request_id: str | None = None):
    return client.post(
        reverse("workflow-comment", args=[wid]),
        {"text": text, "request_id": request_id or uuid.uuid4().hex},
    )


def test_a_comment_from_the_page_is_in_the_timeline_as_a_sentence(acme):
    wid = expense_started("E-C1")
    bob = signed_in("bob")

    posted = _post_comment(bob, wid, "Which hotel was it?")
    page = bob.get(posted["Location"])

    assert posted.status_code == 302
    assert _comments(wid) == ["Which hotel was it?"]
    text = page.content.decode()
    assert COMMENT_ADDED in text
    assert 'Bob asked: <span class="comment">“Which hotel was it?”</span>' in text


def test_the_same_form_posted_twice_records_one_comment(acme):
    wid = expense_started("E-C2")
    alice = signed_in("alice")
    rid = uuid.uuid4().hex

    _post_comment(alice, wid, "Bill attached.", rid)
    _post_comment(alice, wid, "Bill attached.", rid)

    assert _comments(wid) == ["Bill attached."]


def test_a_refused_comment_shows_the_page_again_with_the_text_and_records_nothing(acme):
    wid = expense_started("E-C3")
    bob = signed_in("bob")

    response = _post_comment(bob, wid, "@ivan please check")

    assert response.status_code == 422
    body = response.content.decode()
    assert MENTION_CANNOT_READ.format(names="Ivan", them="Ivan") in body
    assert ">@ivan please check</textarea>" in body
    assert _comments(wid) == []


def test_a_comment_with_a_nul_is_refused_with_a_sentence(acme):
    wid = expense_started("E-C4")

    response = _post_comment(signed_in("alice"), wid, "a\x00b")

    assert response.status_code == 422
    assert COMMENT_NUL in response.content.decode()
    assert _comments(wid) == []


def test_an_auditor_sees_no_comment_form_and_a_post_records_nothing(acme):
    wid = expense_started("E-C5")
    audrey = signed_in("audrey")

    page = audrey.get(reverse("workflow", args=[wid]))
    posted = _post_comment(audrey, wid, "Looks fine")

    assert page.status_code == 200
    assert 'class="comment-form"' not in page.content.decode()
    assert posted.status_code == 403
    assert _comments(wid) == []


def test_someone_who_may_not_read_the_request_gets_not_found(acme):
    wid = expense_started("E-C6")

    response = _post_comment(signed_in("ivan"), wid, "hello")

    assert response.status_code == 404
    assert _comments(wid) == []


def test_the_submitter_withdraws_a_waiting_request_with_a_reason(acme):
    wid = expense_started("E-W1")
    alice = signed_in("alice")
    page = alice.get(reverse("workflow", args=[wid])).content.decode()
    assert "Withdraw your request" in page

    posted = {"reason": "Booked twice by mistake", "request_id": uuid.uuid4().hex}

    asked = alice.post(reverse("workflow-withdraw", args=[wid]), posted)

    assert Workflow.objects.get(pk=wid).status == "RUNNING"  # it asks first
    assert "Withdraw Expense claim E-W1? It stops for good" in asked.content.decode()

    response = alice.post(
        reverse("workflow-withdraw", args=[wid]), {**posted, "confirmed": "yes"}, follow=True
    )

    assert Workflow.objects.get(pk=wid).status == "CANCELLED"
    assert Workflow.objects.get(pk=wid).public_status == "WITHDRAWN"
    text = response.content.decode()
    assert "Alice withdrew the request: Booked twice by mistake" in text
    assert "Withdrawn by Alice: Booked twice by mistake" in text
    assert "Withdraw your request" not in text


def test_a_one_click_withdrawal_from_the_resubmit_form_records_nothing(acme):
    wid = expense_started("E-W3")
    signed_in("bob").post(
        reverse("workflow-decide", args=[wid]),
        {"decision": "send_back", "request_id": "b", "comment": "Receipt?"},
    )

    answer = signed_in("alice").post(
        reverse("workflow-resubmit", args=[wid]), {"decision": "reject", "request_id": "a"}
    )

    assert answer.status_code == 400
    assert "say why under “Withdraw your request”; nothing was recorded" in answer.content.decode()
    assert Workflow.objects.get(pk=wid).public_status == "PENDING_SUBMITTER"


def test_a_withdrawal_without_a_reason_is_refused_and_changes_nothing(acme):
    wid = expense_started("E-W2")

    response = signed_in("alice").post(
        reverse("workflow-withdraw", args=[wid]), {"reason": "  ", "request_id": uuid.uuid4().hex}
    )

    assert response.status_code == 400
    assert WITHDRAW_REASON_MISSING in response.content.decode()
    assert Workflow.objects.get(pk=wid).status == "RUNNING"


def test_only_the_submitter_may_withdraw(acme):
    wid = expense_started("E-W3")
    bob = signed_in("bob")
    assert "Withdraw your request" not in bob.get(reverse("workflow", args=[wid])).content.decode()

    response = bob.post(
        reverse("workflow-withdraw", args=[wid]), {"reason": "no", "request_id": uuid.uuid4().hex}
    )

    assert response.status_code == 409
    assert NOT_WITHDRAWABLE in response.content.decode()
    assert Workflow.objects.get(pk=wid).status == "RUNNING"
