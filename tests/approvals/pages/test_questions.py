"""A question to a person (an @mention in a request's conversation) shows in their
inbox and My requests until they answer it there (a comment or a decision of theirs on
that request after it), and in nobody else's lists."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.db import connection

from approvals.models import User
from approvals.runtime import tenant_scope
from approvals.selectors.questions import asked_of, questions_for
from approvals.services.comments import workflow_comment

from ..helpers import decide
from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db

QUESTION = "@alice which project was the taxi for?"


def comment(username: str, wid: str, text: str) -> None:
    workflow_comment(
        user=User.objects.get(username=username),
        workflow_id=wid,
        text=text,
        request_id=uuid.uuid4().hex,
    )


def lists_of(username: str) -> list[str]:
    client = signed_in(username)
    return [client.get(url).content.decode() for url in ("/", "/workflows/")]


def test_a_question_to_alice_shows_in_her_lists_until_she_answers(acme: Any) -> None:
    wid = expense_started("E-ask-1")
    comment("bob", wid, QUESTION)

    for page in lists_of("alice"):
        assert "Questions for you" in page
        assert f'href="/workflows/{wid}#conversation">Expense claim E-ask-1</a>' in page
        assert "Bob asked you" in page and "which project was the taxi for?" in page
    for page in lists_of("bob"):  # the asker's own lists do not carry it
        assert "Questions for you" not in page

    comment("alice", wid, "@bob the client visit on Tuesday")

    for page in lists_of("alice"):
        assert "Questions for you" not in page
    assert [q.workflow_id for q in questions_for(user=User.objects.get(username="bob"))] == [
        uuid.UUID(wid)
    ]  # and now bob has one, until he answers


def test_a_decision_after_the_question_answers_it(acme: Any, api: Any) -> None:
    wid = expense_started("E-ask-2")
    comment("alice", wid, "@bob is the receipt readable?")
    assert questions_for(user=User.objects.get(username="bob"))

    assert decide(api("bob"), wid, "approve", "bob-ask").status_code == 200

    assert questions_for(user=User.objects.get(username="bob")) == []


def test_a_comment_that_names_nobody_asks_nobody(acme: Any) -> None:
    wid = expense_started("E-ask-3")
    comment("bob", wid, "Looks fine to me")
    for username in ("alice", "bob", "victor"):
        assert questions_for(user=User.objects.get(username=username)) == []


def test_the_questions_walk_the_organisations_comments_not_every_event(acme: Any) -> None:
    """Under the organisation's policy, as the page reads them, the open questions are
    found through the comments' own index (migration 0220), not by reading every event
    of the organisation (277 ms an inbox page at ten million events)."""
    wid = expense_started("E-ask-plan")
    comment("bob", wid, QUESTION)
    alice = User.objects.get(username="alice")
    with tenant_scope.atomic_for(alice), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # what the index allows, at any size
        plan = asked_of(alice).values_list("workflow_id")[:100].explain()
    assert "_comments" in plan
    assert "tenant_id_" not in plan  # not the organisation's every event
    assert [q.workflow_id for q in questions_for(user=alice)] == [uuid.UUID(wid)]
