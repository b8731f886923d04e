"""The lists' costs that do not grow with what they list: the inbox's count read from each
person's counter of open tasks (migration 0037) and equal to a count of their tasks
after every kind of change, the inbox page's queries the same at 5 and at 60 tasks, and
the search page reading only the columns it shows.

The counters are added up by a deferred trigger at COMMIT: the counter tests commit
(``transaction=True``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import PendingTask, User
from approvals.selectors.inbox_lists import open_tasks
from approvals.services.delegations import delegation_set
from approvals.services.workflows import workflow_cancel, workflow_decide, workflow_reassign

from ..helpers import inbox_counters, open_tasks_counted
from .support import expense_started, signed_in

DAY = dt.timedelta(days=1)


def _decide(who: str, wid: str, decision: str, rid: str, **extra: Any) -> None:
    workflow_decide(
        user=User.objects.get(username=who),
        workflow_id=wid,
        decision=decision,
        request_id=rid,
        **extra,
    )


def _shown_count(who: str) -> int:
    return int(signed_in(who).get("/").context["listing"].total)


@pytest.mark.django_db(transaction=True)
def test_the_counters_equal_a_count_of_the_tasks_after_every_kind_of_change(acme: Any) -> None:
    first = expense_started("CNT-1")
    second = expense_started("CNT-2")
    third = expense_started("CNT-3")
    expense_started("CNT-4")
    assert inbox_counters() == open_tasks_counted() and open_tasks_counted()["bob"] == 4

    _decide("bob", first, "approve", "cnt-a")  # bob's task goes, finance's come
    assert inbox_counters() == open_tasks_counted()
    _decide("bob", second, "delegate", "cnt-d", delegate_to="ivan")  # a hand-over
    assert inbox_counters() == open_tasks_counted() and open_tasks_counted()["ivan"] == 1
    workflow_reassign(
        user=User.objects.get(username="olga"),
        workflow_id=second,
        from_user="ivan",
        to_user="farah",
        request_id="cnt-r",
    )
    assert inbox_counters() == open_tasks_counted()
    _decide("bob", third, "send_back", "cnt-s", comment="Add the bill")
    assert inbox_counters() == open_tasks_counted() and open_tasks_counted().get("alice") == 1
    workflow_cancel(
        user=User.objects.get(username="alice"), workflow_id=third, reason="Wrong", request_id="c"
    )
    assert inbox_counters() == open_tasks_counted() and "alice" not in open_tasks_counted()

    # several commands in one transaction: counted once, at its commit
    with transaction.atomic():
        fifth = expense_started("CNT-5")
        _decide("bob", fifth, "reject", "cnt-x", comment="Not this quarter")
        expense_started("CNT-6")
        assert _shown_count("bob") == PendingTask.objects.filter(assignee__username="bob").count()
    assert inbox_counters() == open_tasks_counted()

    # a transaction rolled back, and a savepoint rolled back, change no counter
    before = inbox_counters()
    with transaction.atomic():
        expense_started("CNT-7")
        transaction.set_rollback(True)
    with transaction.atomic():
        expense_started("CNT-8")
        try:
            with transaction.atomic():
                expense_started("CNT-9")
                raise RuntimeError("undone")
        except RuntimeError:
            pass
    assert inbox_counters() == open_tasks_counted()
    assert inbox_counters()["bob"] == before["bob"] + 1

    # out of office: victor's inbox counts bob's tasks as well as his own
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")
    now = timezone.now()
    delegation_set(user=bob, delegate=victor, starts_at=now - DAY, ends_at=now + DAY)
    both = PendingTask.objects.filter(assignee__in=[bob, victor]).count()
    assert open_tasks([victor.pk, bob.pk]) == both
    assert _shown_count("victor") == both
    assert _shown_count("bob") == open_tasks_counted()["bob"]

    # a TRUNCATE empties every count; a recount after a load that skipped the
    # triggers counts them again
    with connection.cursor() as cur:
        cur.execute("UPDATE approvals_inboxversion SET open_tasks = open_tasks + 7")
        cur.execute("SELECT approvals_inbox_recount()")
    assert inbox_counters() == open_tasks_counted()
    with connection.cursor() as cur:
        cur.execute("TRUNCATE approvals_pendingtask")
    assert inbox_counters() == {} == open_tasks_counted()


@pytest.mark.django_db
def test_a_filtered_inbox_counts_its_matches_and_an_unfiltered_one_reads_the_counter(
    acme: Any,
) -> None:
    for i in range(3):
        expense_started(f"F-{i}", amount=100_000 * (i + 1))
    bob = signed_in("bob")
    with CaptureQueriesContext(connection) as plain:
        assert bob.get("/").context["listing"].total == 3
    with CaptureQueriesContext(connection) as searched:
        assert bob.get("/", {"q": "F-1"}).context["listing"].total == 1
    plain_sql = " ".join(q["sql"] for q in plain.captured_queries)
    searched_sql = " ".join(q["sql"] for q in searched.captured_queries)
    assert "COUNT(*)" not in plain_sql and "approvals_inboxversion" in plain_sql
    assert "COUNT(*)" in searched_sql


def _inbox_queries(who: str, query: str = "") -> int:
    client = signed_in(who)
    with CaptureQueriesContext(connection) as ctx:
        assert client.get("/" + query).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.django_db
def test_the_inbox_page_takes_as_many_queries_at_60_tasks_as_at_5(acme: Any) -> None:
    """With every row's extras in play: a held-for-someone task, a handed-over one, a
    resubmitted one, and a colleague's tasks while standing in."""
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")
    now = timezone.now()
    delegation_set(user=victor, delegate=bob, starts_at=now - DAY, ends_at=now + DAY)

    def fill(n: int) -> None:
        for i in range(PendingTask.objects.filter(assignee=bob).count(), n):
            expense_started(f"N-{i}")

    fill(3)
    wid = expense_started("N-back")
    _decide("bob", wid, "send_back", "n-s", comment="Add the bill")
    workflow_decide(
        user=User.objects.get(username="alice"),
        workflow_id=wid,
        decision="approve",  # the submitter's answer to a send-back: a resubmission
        request_id="n-r",
        data={"amountPaise": 5_000_000, "currency": "INR", "department": "eng"},
    )
    handed = expense_started("N-hand")
    _decide("bob", handed, "delegate", "n-d", delegate_to="ivan")
    _decide("ivan", handed, "delegate", "n-d2", delegate_to="bob")
    fill(5)
    assert PendingTask.objects.filter(assignee=bob).count() == 5
    queries = ["", "?sort=amount", "?sort=waiting&q=n-", "?behalf=1", "?overdue=1&sort=requester"]
    _inbox_queries("bob")  # the process's caches
    few = [_inbox_queries("bob", q) for q in queries]
    fill(60)
    assert PendingTask.objects.filter(assignee=bob).count() == 60
    assert [_inbox_queries("bob", q) for q in queries] == few


@pytest.mark.django_db
def test_the_search_page_reads_neither_snapshots_nor_definitions_and_says_sent_back(
    acme: Any, monkeypatch: Any
) -> None:
    from approvals.selectors import search_text

    wid = expense_started("S-back")
    expense_started("S-other")
    _decide("bob", wid, "send_back", "s-s", comment="Add the bill")
    alice = signed_in("alice")
    for window in (search_text.WINDOW_MIN, 1):  # the newest rows first, and past them
        monkeypatch.setattr(search_text, "WINDOW_MIN", window)
        monkeypatch.setattr(search_text, "WINDOW_PER_ROW", 1 if window == 1 else 50)
        with CaptureQueriesContext(connection) as ctx:
            response = alice.get("/search", {"text": "S-back"})
        assert response.status_code == 200
        body = response.content.decode()
        assert "Sent back: edit and resubmit" in body and "Expense claim S-back" in body
        assert "S-other" not in body
        rows = [q["sql"] for q in ctx.captured_queries if 'FROM "approvals_workflow"' in q["sql"]]
        assert rows
        for sql in rows:
            assert '"approvals_workflow"."snapshot",' not in sql
            assert '"approvals_workflowtemplate"."definition"' not in sql


@pytest.mark.django_db
def test_each_rows_forms_carry_its_own_values_escaped(acme: Any) -> None:
    """The forms are rendered once a page for each shape of row: every row still gets
    its own links, ids, question and whom it decides for, escaped as the template
    would."""
    User.objects.filter(username="alice").update(first_name='Al"<i>ce')
    first, second = expense_started("RF-1"), expense_started("RF-2")
    held = expense_started("RF-3", who="bob")  # waits for victor, bob's manager
    victor, farah = User.objects.get(username="victor"), User.objects.get(username="farah")
    now = timezone.now()
    delegation_set(user=victor, delegate=farah, starts_at=now - DAY, ends_at=now + DAY)

    body = signed_in("bob").get("/").content.decode()
    assert "\x1b" not in body
    for wid in (first, second):
        assert f'action="/workflows/{wid}/decide"' in body
    assert ">Send back to Al&quot;&lt;i&gt;ce</button>" in body
    assert 'data-done="Sent {what} back to Al&quot;&lt;i&gt;ce"' in body
    assert 'Al"<i>ce' not in body
    ids = [t.pk for t in PendingTask.objects.filter(assignee__username="bob")]
    for pk in ids:
        for name in ("comment", "delegate", "handover-note"):
            assert body.count(f'id="{name}-{pk}"') == 1
    assert 'name="on_behalf_of"' not in body

    standing_in = signed_in("farah").get("/").content.decode()
    assert f'action="/workflows/{held}/decide"' in standing_in
    assert standing_in.count('<input type="hidden" name="on_behalf_of" value="victor">') == 2
