"""Naming a colleague by typing: ``/people`` suggests at most ten people of one's own
organisation whose names start with what was typed, so the out-of-office page and the
inbox's hand-over stay small with 20,000 people."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.models import Tenant, User
from approvals.pages.absence import PEOPLE_QUERY_INVALID
from approvals.selectors.people import PEOPLE_LIMIT

from .support import signed_in

pytestmark = pytest.mark.django_db


def _found(username: str, q: str) -> list[str]:
    response = signed_in(username).get("/people", {"q": q})
    assert response.status_code == 200, response.content
    return [p["username"] for p in response.json()["people"]]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        pytest.param("iv", ["ivan"], id="username-prefix"),
        pytest.param("IVA", ["ivan"], id="any-case"),
        pytest.param("fi", ["fiona"], id="first-name"),
        pytest.param("a", ["alice", "audrey"], id="several"),
        pytest.param("van", [], id="not-inside-a-word"),
    ],
)
def test_colleagues_are_found_by_the_start_of_a_name(acme: Any, q: str, expected: list[str]):
    assert [u for u in _found("bob", q) if u in {"alice", "audrey", "ivan", "fiona"}] == expected


def test_the_answer_carries_the_name_people_know(acme: Any) -> None:
    User.objects.filter(username="ivan").update(first_name="Ivan", last_name="Iyer")
    people = signed_in("bob").get("/people", {"q": "ivan iy"}).json()["people"]
    assert people == [{"username": "ivan", "name": "Ivan Iyer", "label": "Ivan Iyer (ivan)"}]


def test_only_active_colleagues_of_ones_own_organisation_and_not_oneself(acme: Any) -> None:
    other = Tenant.objects.create(slug="globex-people", name="Globex")
    User.objects.create(username="bobby-elsewhere", first_name="Bobby", tenant=other)
    User.objects.create(username="bo-gone", first_name="Bo", tenant=acme, is_active=False)

    assert "bob" not in _found("bob", "bo")
    assert "bobby-elsewhere" not in _found("bob", "bo")
    assert "bo-gone" not in _found("bob", "bo")
    assert "bob" in _found("alice", "bo")


@pytest.mark.parametrize(
    "q", [pytest.param("", id="blank"), pytest.param("x" * 101, id="long"), "a\x00b"]
)
def test_a_bad_query_is_a_400_with_words(acme: Any, q: str) -> None:
    response = signed_in("bob").get("/people", {"q": q})
    assert response.status_code == 400
    assert response.json() == {"error": PEOPLE_QUERY_INVALID}


def test_twenty_thousand_people_keep_the_page_and_the_answer_small(acme: Any) -> None:
    User.objects.bulk_create(
        [
            User(username=f"person-{i:05d}", first_name=f"Person{i:05d}", tenant=acme)
            for i in range(20_000)
        ],
        batch_size=5000,
    )
    bob = signed_in("bob")

    page = bob.get("/account/out-of-office")
    with CaptureQueriesContext(connection) as lookups:
        found = bob.get("/people", {"q": "person-1"}).json()["people"]

    body = page.content.decode()
    assert page.status_code == 200
    assert "person-00001" not in body and "<select" not in body
    assert len(body) < 20_000
    assert len(found) == PEOPLE_LIMIT
    assert [p["username"] for p in found] == [f"person-{i:05d}" for i in range(10_000, 10_010)]
    people_queries = [q for q in lookups.captured_queries if "approvals_user" in q["sql"]]
    assert len(people_queries) <= 2  # the session's user, and the one lookup
    # the field: labelled, typed, with its suggestions list
    assert '<label for="id_delegate">Who decides for you' in body
    assert 'list="people-list"' in body and '<datalist id="people-list">' in body
