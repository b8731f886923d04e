"""The search's words kept in a column PostgreSQL generates (migration 0040): written
with a workflow's reference, summary and data, rewritten when a decision changes the
data, and read by a search as the GIN index's list or, among a person's own rows, on
the rows themselves."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from approvals.web.search import PAGE_SIZE, WorkflowSearch

from ..helpers import decide, start_expense
from .support import searched

pytestmark = pytest.mark.django_db


def _words(workflow_id: str) -> set[str]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT array(SELECT lexeme FROM unnest(search_words))"
            " FROM approvals_workflow WHERE id = %s",
            [workflow_id],
        )
        return set(cur.fetchone()[0])


def test_the_words_follow_the_data_a_decision_changes(acme: Any, api: Any) -> None:
    started = start_expense(api("alice"), 4_500_000, subject="E-WORDS", description="Hotel Pune")
    wid = started.json()["workflowId"]
    assert {"hotel", "pune", "e-word"} <= _words(wid)

    # a decision that leaves the data as it was leaves the words
    assert decide(api("bob"), wid, "reject", "bob-1").json()["status"] == "PENDING_SUBMITTER"
    assert {"hotel", "pune"} <= _words(wid)

    # the resubmission's new data replaces them, and the search follows
    again = decide(api("alice"), wid, "approve", "alice-1", data={"description": "Taxi in Goa"})
    assert again.json()["status"] == "PENDING_MANAGER"
    words = _words(wid)
    assert {"taxi", "goa"} <= words
    assert not {"hotel", "pune"} & words
    assert [str(w.pk) for w in searched("bob", "goa").results(limit=PAGE_SIZE)] == [wid]
    assert searched("bob", "pune").results(limit=PAGE_SIZE) == []


def _plan(found: WorkflowSearch) -> str:
    sql, params = found.qs.order_by().values_list("pk").query.sql_with_params()
    with connection.cursor() as cur:
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cur.fetchall())


def test_a_persons_own_rows_are_tested_not_looked_up_in_the_index(acme: Any, api: Any) -> None:
    mine = start_expense(api("alice"), 4_500_000, description="Hotel in Pune").json()
    for n in range(3):  # others' hotels, which the index's list of the word holds too
        start_expense(api("victor"), 4_500_000, description=f"Hotel {n}")
    alice = searched("alice", "hotel")
    assert alice.own_ids is not None  # she reads through taking part
    assert [str(w.pk) for w in alice.results(limit=PAGE_SIZE)] == [mine["workflowId"]]
    plan = _plan(alice)
    assert "workflow_search_words" not in plan, plan
    assert "COALESCE(search_words" in plan, plan

    # an auditor's search (every request of the organisation) asks the column itself,
    # which the index serves (the planner's choice on so few rows may be another index)
    auditor = searched("audrey", "hotel")
    assert auditor.own_ids is None
    assert len(auditor.results(limit=PAGE_SIZE)) == 4
    plan = _plan(auditor)
    assert "search_words @@" in plan and "COALESCE" not in plan, plan


def test_a_reference_skips_the_newest_rows_and_a_common_word_asks_them(
    acme: Any, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from approvals.selectors import search_text

    started = [
        start_expense(api("alice"), 4_500_000, subject=f"E-REF-{n}", description="Hotel stay")
        for n in range(12)
    ]
    with connection.cursor() as cur:
        cur.execute("ANALYZE approvals_workflow")
    monkeypatch.setattr(search_text, "_common", None)  # read the fresh statistics
    # a window of 100 newest rows: the share of one reference in 12 fills no page of it
    monkeypatch.setattr(search_text, "WINDOW_MIN", 100)
    monkeypatch.setattr(search_text, "WINDOW_PER_ROW", 1)

    common = searched("audrey", "hotel")
    common.results(limit=PAGE_SIZE)
    assert common.words_share is not None and common.words_share > 0.5
    assert search_text.window_may_fill(common.words_share, rows=PAGE_SIZE)

    wanted = started[7].json()["workflowId"]
    reference = searched("audrey", "E-REF-7")
    asked: list[int] = []
    monkeypatch.setattr(
        search_text, "time_window", lambda *a, **kw: asked.append(1) or None, raising=True
    )
    assert [str(w.pk) for w in reference.results(limit=PAGE_SIZE)] == [wanted]
    assert reference.words_share is not None and reference.words_share < 0.1
    assert not search_text.window_may_fill(reference.words_share, rows=PAGE_SIZE)
    assert asked == []  # the reference went straight to its matches

    # a word that names a person keeps the newest rows first (its share is unknown)
    named = searched("audrey", "alice")
    named.results(limit=PAGE_SIZE)
    assert named.words_share is None
    assert asked == [1]
