"""The search's words kept in a column PostgreSQL generates (migration 0040): written
with a workflow's reference, summary and data, rewritten when a decision changes the
data, and read by a search as the GIN index's list or, among a person's own rows, on
the rows themselves."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction

from approvals.models import Workflow
from approvals.runtime import tenant_scope
from approvals.web.search import PAGE_SIZE, WorkflowSearch

from ..helpers import decide, second_organisation, start_expense
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
    # the organisation's newest 100 rows sampled, a word in 2 of them counted common
    monkeypatch.setattr(search_text, "WINDOW_MIN", 100)
    monkeypatch.setattr(search_text, "WINDOW_PER_ROW", 1)
    monkeypatch.setattr(search_text, "COMMON_MIN_ROWS", 2)
    monkeypatch.setattr(search_text, "_common", {})
    asked: list[bool] = []
    window = search_text.time_window

    def time_window(*args: Any, **kwargs: Any) -> Any:
        asked.append(True)
        return window(*args, **kwargs)

    monkeypatch.setattr(search_text, "time_window", time_window)

    shares = search_text.common_words(acme.pk)
    assert shares["hotel"] == 12 / 100 and shares["e-ref"] == 12 / 100
    assert "7" not in shares  # in one workflow of 12: too rare to be counted
    assert len(searched("audrey", "hotel").results(limit=5)) == 5
    assert asked == [True]  # the common word asked the newest rows

    wanted = started[7].json()["workflowId"]
    reference = searched("audrey", "E-REF-7")
    assert [str(w.pk) for w in reference.results(limit=5)] == [wanted]
    assert reference.words_text is not None
    assert search_text.text_share(reference.words_text, tenant_id=acme.pk) == 0.0
    assert asked == [True]  # the reference went straight to its one match

    # a word that names a person may match otherwise than by the text: the newest
    # rows first
    named = searched("audrey", "alice")
    named.results(limit=5)
    assert named.words_text is None
    assert asked == [True, True]

    # the shares are read again only after COMMON_SECONDS: a new word is learnt then
    start_expense(api("alice"), 4_500_000, description="Zanzibar")
    start_expense(api("alice"), 4_500_000, description="Zanzibar")
    assert "zanzibar" not in search_text.common_words(acme.pk)
    monkeypatch.setattr(search_text, "COMMON_SECONDS", -1.0)
    assert search_text.common_words(acme.pk)["zanzibar"] == 2 / 100


def test_the_common_words_are_the_organisations_own(acme: Any, api: Any) -> None:
    """Read under the organisation's policy when the search acts for it: another
    organisation's words are never counted."""
    from approvals.selectors import search_text

    start_expense(api("alice"), 4_500_000, description="Hotel")
    globex, started = second_organisation()
    Workflow.objects.filter(pk=started.workflow_id).update(summary="Zanzibar")
    with transaction.atomic(), tenant_scope.acting_for(acme.pk):
        search_text._common.pop(acme.pk, None)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(search_text, "COMMON_MIN_ROWS", 1)
            assert "hotel" in search_text.common_words(acme.pk)
            assert "zanzibar" not in search_text.common_words(acme.pk)
            search_text._common.pop(globex.pk, None)
            # acting for Acme, Globex's newest rows are not there to be read
            assert search_text.common_words(globex.pk) == {}
        search_text._common.pop(globex.pk, None)
