"""The inbox's 304 answered before the session, auth and DRF
(approvals/api/inbox_revalidate.py): the same answer as the view's, after the sign-in's
lookup and the versions' only, and never to a person the view would not give it to.

The versions are bumped by a deferred trigger at COMMIT: these tests commit."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from approvals.models import User
from approvals.services.tokens import token_issue

from ..pages.support import expense_started
from .test_inbox_etag import early_in_a_minute  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db(transaction=True)
PATH = "/api/me/tasks"
# Headers every answer carries whichever way it went (the request id, the date).
_PER_ANSWER = {"X-Request-Id"}


def _signed_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _tag(client: Any, params: dict[str, str] | None = None) -> str:
    response = client.get(PATH, params)
    assert response.status_code == 200, response.content
    return str(response["ETag"])


def _statements(client: Any, tag: str, **extra: Any) -> tuple[Any, list[str]]:
    with CaptureQueriesContext(connection) as seen:
        response = client.get(PATH, HTTP_IF_NONE_MATCH=tag, **extra)
    return response, [str(q["sql"]) for q in seen.captured_queries]


def _revalidated(client: Any, tag: str) -> None:
    """A first revalidation, answered early."""
    assert client.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code == 304


def _bob_holding_his_tag() -> tuple[Client, str]:
    """bob signed in with his inbox's tag."""
    bob = _signed_in("bob")
    return bob, _tag(bob)


def test_a_session_revalidates_by_djangos_own_reading(acme, early_in_a_minute):  # noqa: F811
    """The session through Django's session engine and ``auth.get_user`` (no copy of
    either here): the session's row, the user, then the versions."""
    expense_started("REVAL-1")
    bob = _signed_in("bob")
    tag = _tag(bob)
    for _ in range(2):
        response, statements = _statements(bob, tag)
        assert response.status_code == 304 and response.content == b""
        assert response["ETag"] == tag
        assert len(statements) == 3, statements
        assert "django_session" in statements[0]
        assert '"approvals_user"' in statements[1]
        assert "approvals_inboxversion" in statements[2]


def test_a_token_revalidates_with_two_statements(acme, api, early_in_a_minute):  # noqa: F811
    bob = api("bob")
    tag = _tag(bob)
    response, statements = _statements(bob, tag)
    assert response.status_code == 304
    assert len(statements) == 2, statements  # the token (and user), then the versions


def test_the_early_304_carries_the_views_headers(acme, api, early_in_a_minute):  # noqa: F811
    bob = api("bob")
    # ?format=json: the same answer, but the early path leaves it to the view
    early, late = _tag(bob), _tag(bob, {"format": "json"})
    view = bob.get(PATH, {"format": "json"}, HTTP_IF_NONE_MATCH=late)
    fast, statements = _statements(bob, early)
    assert view.status_code == fast.status_code == 304
    assert len(statements) == 2 and view["ETag"] == late
    names = set(view.headers) - _PER_ANSWER
    assert names == set(fast.headers) - _PER_ANSWER
    for name in names - {"ETag"}:
        assert fast[name] == view[name], name


def test_a_session_tag_is_never_anothers(acme, early_in_a_minute):  # noqa: F811
    expense_started("REVAL-2")
    bob, fiona = _signed_in("bob"), _signed_in("fiona")
    bob_tag = _tag(bob)
    assert fiona.get(PATH, HTTP_IF_NONE_MATCH=bob_tag).status_code == 200
    assert bob.get(PATH, HTTP_IF_NONE_MATCH=bob_tag).status_code == 304


def test_no_304_after_a_change_to_the_session_inbox(acme, early_in_a_minute):  # noqa: F811
    bob = _signed_in("bob")
    tag = _tag(bob)
    expense_started("REVAL-3")  # a new task for bob, committed
    response = bob.get(PATH, HTTP_IF_NONE_MATCH=tag)
    assert response.status_code == 200
    assert len(response.json()["items"]) == 1


def test_no_304_once_the_password_changed(acme, early_in_a_minute):  # noqa: F811
    bob, tag = _bob_holding_his_tag()
    user = User.objects.get(username="bob")
    user.set_password("a-new-password-for-bob-7731")
    user.save()
    # the session's hash no longer matches: the view signs it out, never a 304
    assert bob.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code in (401, 403)


def test_no_304_for_a_disabled_account(acme, api, early_in_a_minute):  # noqa: F811
    by_session, by_token = _signed_in("bob"), api("bob")
    session_tag, token_tag = _tag(by_session), _tag(by_token)
    User.objects.filter(username="bob").update(is_active=False)
    assert by_session.get(PATH, HTTP_IF_NONE_MATCH=session_tag).status_code in (401, 403)
    assert by_token.get(PATH, HTTP_IF_NONE_MATCH=token_tag).status_code in (401, 403)


def test_no_304_for_an_expired_session(acme, early_in_a_minute):  # noqa: F811
    bob, tag = _bob_holding_his_tag()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE django_session SET expire_date = now() - interval '1 second'")
    assert bob.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code in (401, 403)


def test_no_304_to_a_token_that_is_not_one(acme, api, early_in_a_minute):  # noqa: F811
    bob = api("bob")
    tag = _tag(bob)
    stranger = Client()
    assert stranger.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code in (401, 403)
    forged = stranger.get(PATH, HTTP_IF_NONE_MATCH=tag, HTTP_AUTHORIZATION="Bearer forged")
    assert forged.status_code == 401


def test_another_format_is_left_to_the_view(acme, api, early_in_a_minute):  # noqa: F811
    bob = api("bob")
    tag = _tag(bob)
    html = bob.get(PATH, HTTP_IF_NONE_MATCH=tag, HTTP_ACCEPT="text/html")
    assert html.status_code != 304  # the view negotiates: only JSON is served


def test_no_304_after_signing_out(acme, early_in_a_minute):  # noqa: F811
    bob = _signed_in("bob")
    tag = _tag(bob)
    _revalidated(bob, tag)
    cookie = bob.cookies["sessionid"].value
    bob.logout()  # the session's row is deleted
    again = Client()
    again.cookies["sessionid"] = cookie
    assert again.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code in (401, 403)


def test_a_revalidated_session_that_now_names_someone_else_is_left_to_the_view(
    acme,
    early_in_a_minute,  # noqa: F811
):
    bob, fiona = _signed_in("bob"), _signed_in("fiona")
    bob_tag = _tag(bob)
    _revalidated(bob, bob_tag)
    # bob's session row now holds fiona's sign-in (signed data, as the store wrote it)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE django_session SET session_data ="
            " (SELECT session_data FROM django_session WHERE session_key = %s)"
            " WHERE session_key = %s",
            [fiona.cookies["sessionid"].value, bob.cookies["sessionid"].value],
        )
    response = bob.get(PATH, HTTP_IF_NONE_MATCH=bob_tag)
    assert response.status_code == 200  # the view answers fiona, in full
    assert response["ETag"] != bob_tag


def test_a_revalidated_session_whose_data_was_tampered_with_is_refused(acme, early_in_a_minute):  # noqa: F811
    bob = _signed_in("bob")
    tag = _tag(bob)
    _revalidated(bob, tag)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE django_session SET session_data = session_data || 'x' WHERE session_key = %s",
            [bob.cookies["sessionid"].value],
        )
    assert bob.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code in (401, 403)


# -- a full read signed in by a session: looked up here too, once -------------------------


def test_a_full_read_looks_the_session_and_versions_up_once(acme, early_in_a_minute):  # noqa: F811
    expense_started("REVAL-5")
    bob = _signed_in("bob")
    _tag(bob)
    with CaptureQueriesContext(connection) as seen:
        response = bob.get(PATH)
    statements = [str(q["sql"]) for q in seen.captured_queries]
    assert response.status_code == 200 and len(response.json()["items"]) == 1
    # the session, the user and the versions each read once (the view reuses them)
    assert sum("django_session" in sql for sql in statements) == 1, statements
    assert sum("approvals_inboxversion" in sql for sql in statements) == 1, statements
    assert sum('"approvals_user"."password"' in sql for sql in statements) == 1, statements
    # the tag is the one the view computes from its own reading of the versions
    view = bob.get(PATH, {"format": "json"})
    assert bob.get(PATH, HTTP_IF_NONE_MATCH=response["ETag"]).status_code == 304
    assert view.get("ETag") and view["ETag"] != response["ETag"]  # the query is part of it


@pytest.mark.parametrize("query", ["", "limit=1", "limit=0", "cursor=forged"])
def test_a_full_read_by_session_answers_as_the_view_does(acme, early_in_a_minute, query):  # noqa: F811
    expense_started("REVAL-6")
    expense_started("REVAL-7")
    bob = _signed_in("bob")
    _tag(bob)
    early = bob.get(f"{PATH}?{query}")
    # ?format=json leaves the read to the view's own path: the session through the ORM
    late = bob.get(f"{PATH}?{query}&format=json")
    assert early.status_code == late.status_code
    if early.status_code == 200:
        assert early.content == late.content
    else:  # the envelope names each answer's own request id
        early_error, late_error = early.json()["error"], late.json()["error"]
        assert early_error.pop("requestId") != late_error.pop("requestId")
        assert early_error == late_error
    names = set(early.headers) - _PER_ANSWER
    assert names == set(late.headers) - _PER_ANSWER
    for name in names - {"ETag"}:
        assert early[name] == late[name], name


def test_a_full_read_of_a_disabled_account_is_refused(acme, early_in_a_minute):  # noqa: F811
    bob = _signed_in("bob")
    _tag(bob)
    User.objects.filter(username="bob").update(is_active=False)
    assert bob.get(PATH).status_code in (401, 403)


def test_a_full_read_after_the_password_changed_signs_the_session_out(acme, early_in_a_minute):  # noqa: F811
    bob = _signed_in("bob")
    _tag(bob)
    user = User.objects.get(username="bob")
    user.set_password("a-new-password-for-bob-7731")
    user.save()
    assert bob.get(PATH).status_code in (401, 403)
    assert bob.get(PATH).status_code in (401, 403)  # flushed, as the view's sign-in check does


def test_a_full_read_of_a_session_now_naming_someone_else_answers_them(acme, early_in_a_minute):  # noqa: F811
    expense_started("REVAL-8")  # a task for bob; fiona holds none
    bob, fiona = _signed_in("bob"), _signed_in("fiona")
    _tag(bob)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE django_session SET session_data ="
            " (SELECT session_data FROM django_session WHERE session_key = %s)"
            " WHERE session_key = %s",
            [fiona.cookies["sessionid"].value, bob.cookies["sessionid"].value],
        )
    response = bob.get(PATH)
    assert response.status_code == 200
    assert response.json()["items"] == []  # fiona's inbox, not bob's


def _both(api: Any) -> list[Any]:
    """bob by session and by token."""
    return [_signed_in("bob"), api("bob")]


def test_a_full_read_by_token_answers_as_the_view_does(acme, api, early_in_a_minute):  # noqa: F811
    expense_started("REVAL-9")
    bob = api("bob")
    early, late = bob.get(PATH), bob.get(PATH, {"format": "json"})
    assert early.status_code == late.status_code == 200
    assert early.content == late.content and len(early.json()["items"]) == 1
    names = set(early.headers) - _PER_ANSWER
    assert names == set(late.headers) - _PER_ANSWER
    for name in names - {"ETag"}:
        assert early[name] == late[name], name


def test_a_full_read_acts_for_the_persons_organisation(acme, api, early_in_a_minute):  # noqa: F811
    expense_started("REVAL-10")
    tenant = User.objects.get(username="bob").tenant_id
    for client in _both(api):
        with CaptureQueriesContext(connection) as seen:
            assert client.get(PATH).status_code == 200
        statements = [str(q["sql"]) for q in seen.captured_queries]
        acts = [i for i, sql in enumerate(statements) if "set_config('role'" in sql]
        tasks = [i for i, sql in enumerate(statements) if "approvals_pendingtask" in sql]
        assert len(acts) == 1 and len(tasks) == 1, statements
        assert acts[0] < tasks[0] and f"'{tenant}'" in statements[acts[0]], statements
        assert statements[-1] == "COMMIT", statements


def test_a_full_read_looks_a_token_up_as_a_revalidation_does(acme, api, early_in_a_minute):  # noqa: F811
    bob = api("bob")
    tag = _tag(bob)
    with CaptureQueriesContext(connection) as full:
        assert bob.get(PATH).status_code == 200
    _, revalidation = _statements(bob, tag)
    read = [str(q["sql"]) for q in full.captured_queries if "approvals_apitoken" in q["sql"]]
    assert len(read) == len([sql for sql in revalidation if "approvals_apitoken" in sql]) >= 1


@pytest.mark.parametrize("query", ["limit=0", "cursor=forged"])
def test_a_token_read_the_view_answers_after_all_looks_the_token_up_once(
    acme,
    api,
    early_in_a_minute,  # noqa: F811
    query,
):
    """The early path looks the token up and leaves the answer to the view; the tenant
    scope and the view's authentication take the token it found."""
    bob = api("bob")
    bob.get(f"{PATH}?{query}")  # the token's last use stamped: no UPDATE below
    with CaptureQueriesContext(connection) as seen:
        response = bob.get(f"{PATH}?{query}")
    assert response.status_code == 400, response.content
    lookups = [str(q["sql"]) for q in seen.captured_queries if "t.digest" in str(q["sql"])]
    assert len(lookups) == 1, lookups


@pytest.mark.parametrize(
    "query", ["limit=0", "limit=201", "limit=x", "cursor=forged", "cursor=a:b:c", "other=1"]
)
def test_a_query_the_view_refuses_is_refused_alike(acme, api, early_in_a_minute, query):  # noqa: F811
    for client in _both(api):
        early = client.get(f"{PATH}?{query}")
        late = client.get(f"{PATH}?{query}&format=json")
        assert early.status_code == late.status_code, query
        if late.status_code != 200:
            assert early.json()["error"]["code"] == late.json()["error"]["code"], query


def test_a_header_the_api_does_not_read_as_a_token_is_not_served_early(acme):
    _, secret = token_issue(user=User.objects.get(username="bob"), name="test")
    stranger = Client()
    # a no-break space is not the separator the API reads (bytes split on ASCII space)
    odd = stranger.get(PATH, HTTP_AUTHORIZATION=f"Bearer\xa0{secret}")
    assert odd.status_code in (401, 403)
    assert stranger.get(PATH, HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 200


def test_a_host_not_allowed_is_refused_as_before(acme, api, early_in_a_minute):  # noqa: F811
    """The common middleware's check of the Host comes before any answer of the inbox's."""
    expense_started("REVAL-11")
    for client in _both(api):
        tag = _tag(client)
        assert client.get(PATH, HTTP_HOST="evil.example").status_code == 400
        assert client.get(PATH, HTTP_HOST="evil.example", HTTP_IF_NONE_MATCH=tag).status_code == 400
        assert client.get(PATH, HTTP_IF_NONE_MATCH=tag).status_code == 304
