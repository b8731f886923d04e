"""Error pages speak people's words with the navigation and a way back; the API keeps
its JSON envelope. The navigation follows the role."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings

from approvals.access import FORBIDDEN_AUDITOR
from approvals.api.errors import NOT_FOUND
from approvals.pages.errors import FORBIDDEN_PAGE

from .support import signed_in

pytestmark = pytest.mark.django_db

WAY_BACK = "Go to your inbox"


def _nav(html: str) -> str:
    return html.split("<nav>", 1)[1].split("</nav>", 1)[0]


@override_settings(DEBUG=False)
def test_a_missing_page_is_the_styled_404_with_the_navigation(acme: Any) -> None:
    response = signed_in("alice").get("/no/such/page")

    assert response.status_code == 404
    html = response.content.decode()
    assert "We could not find that page" in html
    assert WAY_BACK in html
    assert 'href="/workflows/"' in _nav(html)  # My requests, in the navigation
    assert "Not Found" not in html


@override_settings(DEBUG=False)
def test_a_missing_api_url_stays_a_json_envelope(acme: Any) -> None:
    response = signed_in("alice").get("/api/nope")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert response.json()["error"]["message"] == NOT_FOUND


@override_settings(DEBUG=False)
def test_a_request_one_may_not_read_is_the_styled_404(acme: Any) -> None:
    response = signed_in("alice").get("/workflows/00000000-0000-0000-0000-000000000000")

    assert response.status_code == 404
    assert WAY_BACK in response.content.decode()


def test_the_auditor_is_told_she_may_not_submit_on_a_styled_403(acme: Any) -> None:
    response = signed_in("audrey").get("/workflows/new")

    assert response.status_code == 403
    html = response.content.decode()
    assert FORBIDDEN_AUDITOR in html
    assert WAY_BACK in html
    assert "No workflow templates are published yet" not in html
    assert "<nav>" in html


def test_a_refusal_without_a_sentence_says_the_page_is_not_theirs(acme: Any) -> None:
    # The Verify page refuses people who do not audit with a bare PermissionDenied.
    response = signed_in("alice").get("/audit/verify")

    assert response.status_code == 403
    assert FORBIDDEN_PAGE in response.content.decode()


def test_the_server_error_page_needs_no_request_context() -> None:
    from django.template.loader import get_template

    html = get_template("500.html").render()  # as Django renders it: no request

    assert "Something went wrong on our side" in html
    assert WAY_BACK in html
    assert 'href="/workflows/"' in html


def test_the_bad_request_page_has_the_navigation_and_a_way_back() -> None:
    from django.template.loader import get_template

    html = get_template("400.html").render()

    assert "We could not understand that request" in html
    assert WAY_BACK in html
    assert 'href="/search"' in html


@override_settings(DEBUG=False)
def test_an_unhandled_error_on_a_page_is_the_plain_500(acme: Any, monkeypatch: Any) -> None:
    from approvals.pages import inbox as pages

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(pages, "inbox_listing", broken)
    client = Client(raise_request_exception=False)
    client.force_login(_user("alice"))

    response = client.get("/")

    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong on our side" in html
    assert "boom" not in html


def _user(username: str) -> Any:
    from approvals.models import User

    return User.objects.get(username=username)


@pytest.mark.parametrize(
    ("username", "shown", "hidden"),
    [
        ("alice", ["New request"], ["Administration", "Verify"]),
        ("fiona", ["New request", "Administration"], ["Verify"]),
        ("olga", ["New request", "Administration", "Verify"], []),
        ("admin", ["Administration"], []),
        ("audrey", ["Verify"], ["New request", "Administration"]),
    ],
)
def test_the_navigation_follows_the_role(
    acme: Any, username: str, shown: list[str], hidden: list[str]
) -> None:
    nav = _nav(signed_in(username).get("/search").content.decode())

    for link in shown:
        assert f">{link}</a>" in nav, link
    for link in hidden:
        assert f">{link}</a>" not in nav, link
