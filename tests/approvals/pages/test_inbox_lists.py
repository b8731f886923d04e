"""The inbox's count, sort, filters and search by query parameters (bad ones fall back
and say so, never a 500), in a number of queries that does not grow with its rows; who
each row waits on and since when; what a resubmission changed; My requests' filters."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from approvals.models import PendingTask, User
from approvals.notifications.format import money_format
from approvals.services.workflows import workflow_decide, workflow_start
from approvals.web.inbox_lists import data_changes

from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db


def _order(body: str, subjects: list[str]) -> list[str]:
    """The ``subjects`` in the order the inbox lists them."""
    found = {s: body.find(f"Expense claim {s}<") for s in subjects}
    assert all(at >= 0 for at in found.values()), found
    return sorted(subjects, key=found.__getitem__)


def _get(client: Client, query: str) -> str:
    response = client.get("/" + query)
    assert response.status_code == 200
    return response.content.decode()


def _task(subject: str, who: str = "bob") -> PendingTask:
    return PendingTask.objects.get(workflow__subject_id=subject, assignee__username=who)


def test_the_inbox_counts_and_sorts_by_amount_waiting_and_due(acme: Any) -> None:
    for subject, amount in (("A-small", 100_000), ("A-big", 9_900_000), ("A-mid", 500_000)):
        expense_started(subject, amount=amount)
    now = timezone.now()
    for subject, created, due in (("A-small", 1, 3), ("A-big", 3, 2), ("A-mid", 2, 1)):
        PendingTask.objects.filter(pk=_task(subject).pk).update(
            created_at=now - dt.timedelta(days=created), due_at=now + dt.timedelta(days=due)
        )
    bob = signed_in("bob")
    subjects = ["A-small", "A-big", "A-mid"]

    body = _get(bob, "")
    assert re.search(r"<strong>3</strong> requests wait for you", body)
    assert _order(body, subjects) == ["A-mid", "A-big", "A-small"]  # due, soonest first
    assert _order(_get(bob, "?sort=amount"), subjects) == ["A-big", "A-mid", "A-small"]
    waiting = _get(bob, "?sort=waiting")
    assert _order(waiting, subjects) == ["A-big", "A-mid", "A-small"]
    assert "waiting 3 days, since" in waiting and "Waits on you" in waiting


def test_the_inbox_sorts_by_requester(acme: Any) -> None:
    for who in ("ivan", "bob", "farah"):  # all three report to victor
        expense_started(f"R-{who}", who=who)
    body = _get(signed_in("victor"), "?sort=requester")
    assert _order(body, ["R-ivan", "R-bob", "R-farah"]) == ["R-bob", "R-farah", "R-ivan"]


def test_the_inbox_filters_by_kind_overdue_behalf_and_text(acme: Any) -> None:
    expense_started("F-late")
    expense_started("F-held")
    expense_started("F-plain", amount=123_400)
    workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="purchase-request",
        subject_type="purchase",
        subject_id="P-1",
        data={"amountPaise": 5_000_000, "currency": "INR", "category": "SOFTWARE", "item": "IDE"},
    )
    PendingTask.objects.filter(pk=_task("F-late").pk).update(
        due_at=timezone.now() - dt.timedelta(hours=2)
    )
    PendingTask.objects.filter(pk=_task("F-held").pk).update(on_behalf_of="victor")
    bob = signed_in("bob")

    kind = _get(bob, "?kind=purchase-request")
    assert "P-1" in kind and "F-plain" not in kind
    assert re.search(r"<strong>1</strong> request matches", kind)
    late = _get(bob, "?overdue=1")
    assert "Expense claim F-late<" in late and "F-held" not in late and "F-plain" not in late
    held = _get(bob, "?behalf=on")
    assert "Expense claim F-held<" in held and "F-late" not in held
    found = _get(bob, "?q=f-PLAIN")
    assert "Expense claim F-plain<" in found and "F-held" not in found
    assert "Expense claim F-plain<" in _get(bob, "?q=alice&sort=amount")
    nothing = _get(bob, "?q=no-such-thing")
    assert "Nothing waiting for you matches these filters" in nothing
    # the choices stay chosen in the form
    both = _get(bob, "?kind=expense-approval&overdue=1&sort=amount&q=F-")
    assert 'value="expense-approval" selected' in both
    assert 'value="amount" selected' in both and 'name="overdue" value="1" checked' in both


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("?sort=price", "cannot be sorted by “price”; it is sorted by due date"),
        ("?sort=due%00", "cannot be sorted by"),
        ("?kind=no-such-kind", "There is no kind of request “no-such-kind”"),
        ("?overdue=maybe", "“Overdue only” is on or off"),
        ("?behalf=2", "“Held for someone else” is on or off"),
        ("?page=abc&sort=amount", "Page “abc” is not a page number"),
        ("?page=99999999999&sort=amount", "is not a page number"),
        ("?page=-1&sort=waiting", "is not a page number"),
        ("?q=a%00b", "cannot hold a NUL character"),
        ("?q=" + "x" * 300, "at most 100 characters"),
    ],
)
def test_bad_inbox_parameters_fall_back_and_say_so(acme: Any, query: str, said: str) -> None:
    expense_started("B-1")
    body = _get(signed_in("bob"), query)
    assert said in body
    assert "Expense claim B-1<" in body or "matches these filters" in body


def test_a_page_past_the_last_is_the_last_and_a_bad_cursor_starts_again(acme: Any) -> None:
    expense_started("L-1")
    bob = signed_in("bob")
    assert "Expense claim L-1<" in _get(bob, "?sort=amount&page=40")
    response = bob.get("/?cursor=not-a-cursor")
    assert response.status_code == 302 and response["Location"] == "/"


def _queries(client: Client, query: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get("/" + query)
    assert response.status_code == 200
    return len(ctx.captured_queries)


QUERIES = [
    "",
    "?sort=amount&q=Q-",
    "?sort=requester&overdue=1",
    "?sort=waiting&kind=expense-approval",
]


def test_the_inbox_query_count_is_the_same_for_3_and_30_rows_in_every_sort(acme: Any) -> None:
    bob = signed_in("bob")

    def counts(n: int) -> list[int]:
        for i in range(PendingTask.objects.filter(assignee__username="bob").count(), n):
            expense_started(f"Q-{i}")
        PendingTask.objects.filter(assignee__username="bob").update(
            due_at=timezone.now() - dt.timedelta(hours=1)
        )
        return [_queries(bob, q) for q in QUERIES]

    counts(1)  # caches warm (definitions, session)
    few = counts(3)
    many = counts(30)
    assert many == few


def _send_back_and_resubmit(subject: str) -> None:
    wid = expense_started(subject, amount=4_500_000)
    bob, alice = User.objects.get(username="bob"), User.objects.get(username="alice")
    workflow_decide(
        user=bob,
        workflow_id=wid,
        decision="send_back",
        request_id=uuid.uuid4().hex,
        comment="Only the hotel, please",
    )
    workflow_decide(
        user=alice,
        workflow_id=wid,
        decision="approve",
        request_id=uuid.uuid4().hex,
        comment="Took the taxi out",
        data={"amountPaise": 4_000_000, "currency": "INR", "department": "sales"},
    )


def test_a_resubmitted_request_shows_what_changed_and_the_note(acme: Any) -> None:
    _send_back_and_resubmit("RS-1")
    expense_started("RS-plain")
    body = _get(signed_in("bob"), "")
    row = body[body.index("Expense claim RS-1<") :]
    row = row[: row.index("</details>")]
    assert "Resubmitted" in row and "2 changes" in row
    old = money_format(minor=4_500_000, currency="INR")
    new = money_format(minor=4_000_000, currency="INR")
    assert f"Amount</span>: <del>{old}</del>" in row and f"<ins>{new}</ins>" in row
    assert "Department</span>: <del>Engineering</del>" in row and "<ins>Sales</ins>" in row, row
    assert "Took the taxi out" in row
    plain = body[body.index("Expense claim RS-plain<") :]
    assert "Resubmitted" not in plain[: plain.index('class="act"')]


def test_data_changes_read_as_people_read_them() -> None:
    schema = {
        "properties": {
            "amountPaise": {
                "type": "integer",
                "title": "Amount",
                "x-money": {"currency": "currency"},
            },
            "currency": {"type": "string", "enum": ["INR", "USD"]},
            "note": {"type": "string"},
        }
    }
    old = {"amountPaise": 150_000, "currency": "INR", "note": "x", "_signals": {"a": 1}}
    new = {"amountPaise": 150_000, "currency": "USD", "_signals": {"a": 2}}
    changes = data_changes(schema, old, new)
    assert [(c.field, c.old, c.new) for c in changes] == [
        ("Amount", money_format(minor=150_000, currency="INR"), "$1,500.00"),
        ("Note", "x", "(empty)"),
    ]
    assert data_changes(schema, old, dict(old)) == []


def test_my_requests_lead_with_the_line_say_who_and_filter(acme: Any) -> None:
    expense_started("M-wait")
    _send_back_and_resubmit("M-back")
    alice = signed_in("alice")
    body = alice.get("/workflows/").content.decode()
    assert "Waits on Bob" in body and "ago" in body
    waiting = alice.get("/workflows/?status=waiting&kind=expense-approval").content.decode()
    assert "M-wait" in waiting
    approved = alice.get("/workflows/?status=approved").content.decode()
    assert "M-wait" not in approved and "None of your requests matches" in approved
    bad = alice.get("/workflows/?status=EXPLODED&kind=%00")
    assert bad.status_code == 200
    text = bad.content.decode()
    assert "There is no status “EXPLODED”" in text and "There is no kind of request" in text
    assert "M-wait" in text
