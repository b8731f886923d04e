"""The search's words in the request's own text (PostgreSQL full-text search over the GIN
index ``workflow_search_text``), its amount range, who decided, its orders, its pages
and its export of the whole result as CSV; each bad value a sentence and nothing changed."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client, RequestFactory

from approvals.models import User, Workflow, WorkflowEvent
from approvals.selectors.search_text import INDEX
from approvals.web import search as search_module
from approvals.web import search_results

from ..helpers import decide, start_expense
from .support import signed_in
from .test_search import _api_ids, _page_ids

pytestmark = pytest.mark.django_db

HOTEL = "Hotel in Pune for the offsite"


def _start(api: Any, subject: str, amount: int, who: str = "alice", **data: Any) -> str:
    response = start_expense(api(who), amount, subject=subject, **data)
    assert response.status_code == 201, response.content
    return str(response.json()["workflowId"])


def _csv(client: Client, params: dict[str, str]) -> list[list[str]]:
    response = client.get("/search/export.csv", params)
    assert response.status_code == 200, response.content
    assert response.streaming and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="requests-')
    body = b"".join(response.streaming_content).decode()  # type: ignore[attr-defined]
    return list(csv.reader(io.StringIO(body)))


@pytest.fixture
def claims(acme: Any, api: Any) -> dict[str, str]:
    """Alice's hotel (₹45,000, waits for bob), her taxi (₹500, approved at once), her
    laptop (₹90,000; bob approved, waits for finance); victor's dinner (₹12,000)."""
    hotel = _start(api, "TRIP-1", 4_500_000, description=HOTEL)
    taxi = _start(api, "TAXI-2", 50_000, description="Taxi to the airport")
    laptop = _start(api, "LAPTOP-7", 9_000_000, description="Laptop for the new hire")
    assert decide(api("bob"), laptop, "approve", "s-1").status_code == 200
    dinner = _start(api, "DIN-4", 1_200_000, who="victor", description="Team dinner, hotel bar")
    return {"hotel": hotel, "taxi": taxi, "laptop": laptop, "dinner": dinner}


# -- words ---------------------------------------------------------------------------------


WORDS = [
    pytest.param("hotel", ["dinner", "hotel"], id="a-word-of-the-description"),
    pytest.param("HOTELS", ["dinner", "hotel"], id="a-stem-in-english"),
    pytest.param("hot", [], id="whole-words-not-a-prefix"),
    pytest.param("the hotel", ["dinner", "hotel"], id="a-stop-word-asks-nothing"),
    pytest.param("pune offsite", ["hotel"], id="every-word"),
    pytest.param("hotel airport", [], id="words-of-two-requests"),
    pytest.param("hotel victor", ["dinner"], id="a-word-and-the-submitters-name"),
    pytest.param("taxi claim", ["taxi"], id="a-word-and-the-kind"),
    pytest.param("TRIP-1", ["hotel"], id="the-reference"),
    pytest.param("- ₹", ["dinner", "laptop", "taxi", "hotel"], id="punctuation-asks-nothing"),
]


@pytest.mark.parametrize(("text", "expected"), WORDS)
def test_words_are_found_in_the_description_and_every_text(claims, api, text, expected):
    audrey = api("audrey")  # an auditor reads everything

    found = _api_ids(audrey, {"text": text})

    assert found == [claims[name] for name in expected]
    assert _page_ids(signed_in("audrey"), {"text": text}) == found


def test_a_word_finds_only_what_the_person_may_read(claims, api):
    # victor's dinner says "hotel" too; alice may not read it
    assert _api_ids(api("alice"), {"text": "hotel"}) == [claims["hotel"]]
    assert _page_ids(signed_in("ivan"), {"text": "hotel"}) == []


def test_explain_shows_the_gin_index_answering_a_word(claims, rf: RequestFactory):
    # given 3,000 more requests of other words, and the planner's figures of them
    taxi = Workflow.objects.get(pk=claims["taxi"])
    Workflow.objects.bulk_create(
        [
            Workflow(
                tenant_id=taxi.tenant_id,
                template_id=taxi.template_id,
                template_key=taxi.template_key,
                template_version=taxi.template_version,
                subject_type="expense",
                subject_id=f"BULK-{i}",
                data={**taxi.data, "description": f"Taxi number {i} to the airport"},
                submitter_id=taxi.submitter_id,
                public_status="APPROVED",
                summary=f"Taxi number {i}",
            )
            for i in range(3000)
        ],
        batch_size=1000,
    )
    with connection.cursor() as cur:
        # as autovacuum would: the index's pending entries merged (the planner costs
        # a long pending list as a walk of it, as much as the table's), then ANALYZE
        cur.execute(f"SELECT gin_clean_pending_list('{INDEX}')")
        cur.execute("ANALYZE approvals_workflow")
    request = rf.get("/search")
    request.user = User.objects.get(username="audrey")
    search = search_module.WorkflowSearch({"text": "hotel pune"}, request=request)
    assert search.is_valid()

    # when
    plan = search.ordered().explain()

    assert f"Bitmap Index Scan on {INDEX}" in plan, plan
    assert "to_tsquery" in plan or "@@" in plan


# -- amount, decided by, order ---------------------------------------------------------------


AMOUNTS = [
    pytest.param({"amountMin": "10000", "amountMax": "50000"}, ["dinner", "hotel"], id="both"),
    pytest.param(
        {"amountMin": "₹10,000", "amountMax": "₹45,000.00"},
        ["dinner", "hotel"],
        id="as-people-write-it",
    ),
    pytest.param({"amountMin": "45000.01"}, ["laptop"], id="from-a-paisa-over"),
    pytest.param({"amountMax": "500"}, ["taxi"], id="up-to-inclusive"),
    pytest.param({"amountMin": "12000", "amountMax": "12000"}, ["dinner"], id="one-amount"),
]


@pytest.mark.parametrize(("params", "expected"), AMOUNTS)
def test_the_amount_range_is_in_currency_units(claims, api, params, expected):
    found = _api_ids(api("audrey"), params)

    assert found == [claims[name] for name in expected]
    assert _page_ids(signed_in("audrey"), params) == found


def test_decided_by_finds_what_that_person_decided(claims, api):
    assert _api_ids(api("audrey"), {"decidedBy": "bob"}) == [claims["laptop"]]
    assert _page_ids(signed_in("alice"), {"decidedBy": "bob"}) == [claims["laptop"]]
    assert _api_ids(api("audrey"), {"decidedBy": "farah"}) == []
    assert _api_ids(api("audrey"), {"decidedBy": "nobody-at-all"}) == []


SORTS = [
    pytest.param("newest", ["dinner", "laptop", "taxi", "hotel"], id="newest"),
    pytest.param("oldest", ["hotel", "taxi", "laptop", "dinner"], id="oldest"),
    pytest.param("amount", ["laptop", "hotel", "dinner", "taxi"], id="amount"),
    # APPROVED, PENDING_FINANCE, then PENDING_MANAGER newest first
    pytest.param("status", ["taxi", "laptop", "dinner", "hotel"], id="status"),
]


@pytest.mark.parametrize(("sort", "expected"), SORTS)
def test_each_sort_orders_the_results(claims, api, sort, expected):
    found = _api_ids(api("audrey"), {"sort": sort})

    assert found == [claims[name] for name in expected]
    assert _page_ids(signed_in("audrey"), {"sort": sort}) == found


# -- pages -------------------------------------------------------------------------------


@pytest.fixture
def thirty(acme: Any, api: Any) -> list[str]:
    """Thirty of alice's claims, oldest first."""
    return [_start(api, f"P-{i:02d}", 50_000 + i) for i in range(30)]


def test_the_results_come_in_pages_with_links_between_them(thirty):
    alice = signed_in("alice")

    first = alice.get("/search", {"sort": "oldest"})
    second = alice.get("/search", {"sort": "oldest", "page": "2"})
    past = alice.get("/search", {"sort": "oldest", "page": "3"})

    ids = lambda r: re.findall(r'<tr data-workflow="([0-9a-f-]+)"', r.content.decode())  # noqa: E731
    assert ids(first) == thirty[:25] and ids(second) == thirty[25:]
    assert first.context["links"]["next"] == "?sort=oldest&page=2"
    assert "previous" not in first.context["links"]
    assert second.context["links"] == {
        "export": "?sort=oldest",
        "previous": "?sort=oldest&page=1",
    }
    assert "Page 2 of the requests you may see." in second.content.decode()
    assert ids(past) == [] and "page 3 is past the last one" in past.content.decode()


# -- export ------------------------------------------------------------------------------


def test_the_export_is_the_whole_result_in_peoples_words(claims, thirty, api):
    Workflow.objects.filter(pk=claims["hotel"]).update(
        created_at="2026-03-01T20:00:00Z"  # 01:30 on 2 March in India
    )
    rows = _csv(signed_in("alice", tz_cookie="Asia/Kolkata"), {"sort": "amount"})

    assert rows[0] == list(search_results.CSV_COLUMNS)
    assert len(rows) == 1 + 3 + 30  # not a page of 25: all of alice's
    laptop, hotel = rows[1], rows[2]
    assert laptop[:5] == [
        "LAPTOP-7",
        "Laptop for the new hire, ₹90,000.00",
        "₹90,000.00",
        "Waiting: Finance",
        "Alice",
    ]
    assert hotel[:5] == [
        "TRIP-1",
        f"{HOTEL}, ₹45,000.00",
        "₹45,000.00",
        "Waiting: Manager",
        "Alice",
    ]
    assert hotel[5:] == ["2026-03-02 01:30+05:30", ""]
    taxi = next(r for r in rows if r[0] == "TAXI-2")
    assert taxi[3] == "Approved" and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d\+05:30", taxi[6])


def test_the_export_makes_a_formula_plain_text(acme, api):
    _start(api, "=1+2", 90_000, description='=HYPERLINK("http://evil.example","x")')
    _start(api, "OK-1", 90_000, description="@SUM(A1) -2 +3")

    rows = _csv(signed_in("alice"), {"sort": "oldest"})

    assert rows[1][0] == "'=1+2" and rows[1][1].startswith("'=HYPERLINK(")
    assert rows[2][0] == "OK-1" and rows[2][1].startswith("'@SUM(A1)")


def test_the_export_holds_only_what_the_person_may_read(claims, api):
    ivan = _csv(signed_in("ivan"), {})
    alice = _csv(signed_in("alice"), {"text": "hotel"})
    audrey = _csv(signed_in("audrey"), {"text": "hotel"})

    assert ivan == [list(search_results.CSV_COLUMNS)]
    assert [r[0] for r in alice[1:]] == ["TRIP-1"]  # not victor's dinner
    assert sorted(r[0] for r in audrey[1:]) == ["DIN-4", "TRIP-1"]


# -- bad input ---------------------------------------------------------------------------


BAD = [
    pytest.param({"amountMin": "abc"}, "amountMin", "Enter an amount such as", id="amount-words"),
    pytest.param({"amountMax": "-5"}, "amountMax", "Enter at least 0.00.", id="negative"),
    pytest.param({"amountMin": "1.234"}, "amountMin", "at most 2 digits", id="too-precise"),
    pytest.param({"amountMin": "9" * 60}, "amountMin", "Enter an amount such as", id="huge"),
    pytest.param(
        {"amountMin": "50000", "amountMax": "10000"},
        "amountMax",
        search_module.AMOUNT_INVERTED,
        id="min-over-max",
    ),
    pytest.param({"text": "hotel " * 1700}, "text", "at most 200 characters", id="ten-kb"),
    pytest.param({"text": "ho\x00tel"}, "text", "Null characters are not allowed", id="nul"),
    pytest.param(
        {"text": " ".join("abcdefghijklmnopqrstu")},
        "text",
        search_module.TOO_MANY_WORDS,
        id="too-many-words",
    ),
    # Words PostgreSQL's parser finds no lexeme in: asked of nothing, they were a 500.
    pytest.param(
        {"text": "_"}, "text", search_module.WORD_UNSEARCHABLE.format(word="_"), id="underscore"
    ),
    pytest.param(
        {"text": "²"}, "text", search_module.WORD_UNSEARCHABLE.format(word="²"), id="superscript"
    ),
    pytest.param(
        {"text": "_-_"},
        "text",
        search_module.WORD_UNSEARCHABLE.format(word="_-_"),
        id="underscores",
    ),
    pytest.param(
        {"text": "hotel _"},
        "text",
        search_module.WORD_UNSEARCHABLE.format(word="_"),
        id="word-and-underscore",
    ),
    pytest.param({"decidedBy": "bob\x00"}, "decidedBy", "Null characters", id="nul-person"),
    pytest.param({"sort": "price"}, "sort", "Select a valid choice", id="sort-unknown"),
]


@pytest.mark.parametrize(("params", "field", "words"), BAD)
def test_a_bad_value_is_a_sentence_and_changes_nothing(claims, api, params, field, words):
    events, workflows = WorkflowEvent.objects.count(), list(Workflow.objects.values())

    page = signed_in("alice").get("/search", params)
    export = signed_in("alice").get("/search/export.csv", params)
    response = api("alice").get("/api/workflows", params)

    for refused in (page, export):
        assert refused.status_code == 400
        assert words in " ".join(refused.context["form"].errors[field])
        assert 'role="alert"' in refused.content.decode()
        assert "<tr data-workflow" not in refused.content.decode()
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith(f"{field}: ")
    assert WorkflowEvent.objects.count() == events
    assert list(Workflow.objects.values()) == workflows


@pytest.mark.parametrize("page", ["0", "-1", "abc", "4001", "9" * 40, "1\x00"])
def test_a_page_out_of_reach_is_a_sentence(claims, page):
    response = signed_in("alice").get("/search", {"text": "hotel", "page": page})

    assert response.status_code == 400
    assert search_module.PAGE_INVALID in response.content.decode()
    assert "<tr data-workflow" not in response.content.decode()


def test_the_newest_rows_first_give_the_same_pages_as_all_of_them(thirty, monkeypatch):
    from approvals.selectors import search_text

    # a window of the 26 newest (or oldest) rows of the 30, where a page needs 26
    monkeypatch.setattr(search_text, "WINDOW_MIN", 1)
    monkeypatch.setattr(search_text, "WINDOW_PER_ROW", 1)
    alice = signed_in("alice")

    newest = _page_ids(alice, {"text": "expense claim", "sort": "newest"})
    oldest = _page_ids(alice, {"text": "expense claim", "sort": "oldest"})
    second = _page_ids(alice, {"text": "expense claim", "sort": "oldest", "page": "2"})
    outside = _page_ids(alice, {"text": "P-29", "sort": "oldest"})  # past the window

    assert newest == thirty[::-1][:25] and oldest == thirty[:25] and second == thirty[25:]
    assert outside == [thirty[29]]
