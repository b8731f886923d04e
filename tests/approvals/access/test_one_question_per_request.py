"""One question per request: a request asks the read rule (``access.may_read_workflow``)
once of the person sending it, and carries the answer (``access.ReadableWorkflow``) to
the services and the command path, which take it instead of asking again. Counted with a
spy that still asks the real rule, on the real database."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from approvals import access
from approvals.models import User, WorkflowEvent
from approvals.services.comments import workflow_comment
from approvals.services.workflows import readable_for

from ..files import PDF, upload
from ..helpers import decide
from ..pages.support import expense_started, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times the read rule was asked, by the username it was asked of."""
    counts: Counter[str] = Counter()
    real = access.may_read_workflow

    def spy(user: User, wf: Any, facts: access.ReadFacts = access.UNREAD) -> bool:
        counts[user.username] += 1
        return real(user, wf, facts)

    monkeypatch.setattr(access, "may_read_workflow", spy)
    return counts


def _events(wid: str, kind: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid, type=kind).count()


def test_a_comment_from_the_page_asks_the_read_rule_once(acme: Any, asked: Counter[str]) -> None:
    wid = expense_started("E-one-question-1")
    bob = signed_in("bob")
    asked.clear()

    reply = bob.post(f"/workflows/{wid}/comments", {"text": "Looks fine", "request_id": "q-1"})

    assert reply.status_code == 302
    assert _events(wid, "CommentAdded") == 1
    assert asked == Counter({"bob": 1})


def test_a_comment_with_a_file_and_a_mention_asks_once_of_each_person(
    acme: Any, asked: Counter[str], files_root: Path
) -> None:
    wid = expense_started("E-one-question-2")
    bob = signed_in("bob")
    asked.clear()

    reply = bob.post(
        f"/workflows/{wid}/comments",
        {"text": "@alice the quote?", "request_id": "q-2", "file": [upload("q.pdf", PDF)]},
    )

    assert reply.status_code == 302
    assert (_events(wid, "CommentAdded"), _events(wid, "FileAttached")) == (1, 1)
    # bob, who posts; alice, whom the comment mentions: may she read it?
    assert asked == Counter({"bob": 1, "alice": 1})


def test_a_comment_through_the_api_asks_once(acme: Any, api: Any, asked: Counter[str]) -> None:
    wid = expense_started("E-one-question-3")
    asked.clear()

    reply = api("bob").post(
        f"/api/workflows/{wid}/comments",
        {"text": "Looks fine", "requestId": "q-3"},
        format="json",
    )

    assert reply.status_code == 200, reply.content
    assert asked == Counter({"bob": 1})


def test_a_file_from_the_page_and_a_withdrawal_ask_once_each(
    acme: Any, asked: Counter[str], files_root: Path
) -> None:
    wid = expense_started("E-one-question-4")
    alice = signed_in("alice")
    asked.clear()

    attached = alice.post(
        f"/workflows/{wid}/files", {"file": [upload("q.pdf", PDF)], "request_id": "q-4"}
    )
    assert attached.status_code == 302 and _events(wid, "FileAttached") == 1
    assert asked == Counter({"alice": 1})

    asked.clear()
    withdrawn = alice.post(
        f"/workflows/{wid}/withdraw",
        {"reason": "typo", "request_id": "q-5", "confirmed": "yes"},
    )
    assert withdrawn.status_code == 302, withdrawn.content
    assert _events(wid, "WorkflowCancelled") == 1
    assert asked == Counter({"alice": 1})


def test_an_answer_for_another_person_or_request_is_refused_and_records_nothing(
    acme: Any,
) -> None:
    wid = expense_started("E-one-question-6")
    other = expense_started("E-one-question-7")
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")
    bobs = readable_for(bob, wid)

    with pytest.raises(ValueError, match="not for this person"):
        workflow_comment(user=victor, workflow_id=wid, text="hi", request_id="q-6", readable=bobs)
    with pytest.raises(ValueError, match="not for this person"):
        workflow_comment(user=bob, workflow_id=other, text="hi", request_id="q-7", readable=bobs)
    assert _events(wid, "CommentAdded") == _events(other, "CommentAdded") == 0


def test_the_request_page_and_a_resubmission_with_a_file_ask_once(
    acme: Any, api: Any, asked: Counter[str], files_root: Path
) -> None:
    wid = expense_started("E-one-question-8")
    alice = signed_in("alice")
    asked.clear()

    page = alice.get(f"/workflows/{wid}")
    assert page.status_code == 200
    assert asked == Counter({"alice": 1})

    sent_back = decide(api("bob"), wid, "send_back", "q-8", comment="Which project?")
    assert sent_back.status_code == 200, sent_back.content
    asked.clear()
    resubmitted = alice.post(
        f"/workflows/{wid}/resubmit",
        {
            "amountPaise": "45000.00",
            "currency": "INR",
            "department": "eng",
            "comment": "Project Atlas",
            "request_id": "q-9",
            "file": [upload("receipt.pdf", PDF)],
        },
    )
    assert resubmitted.status_code == 302, resubmitted.content
    assert (_events(wid, "Resubmitted"), _events(wid, "FileAttached")) == (1, 1)
    assert asked == Counter({"alice": 1})
