"""Failed sign-ins are limited per account and per client address (django-axes), on the
form and on POST /api/auth/token, and no request header resets the count."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from approvals.admin.login import USERNAME_TOO_LONG
from approvals.http.lockout import lockout_message

LIMIT = 5
ATTACKER = "198.51.100.7"


def api_login(username: str, password: str, *, xff: str, remote: str = ATTACKER) -> Any:
    return APIClient().post(
        "/api/auth/token",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=remote,
        HTTP_X_FORWARDED_FOR=xff,
    )


def form_login(client: Client, username: str, password: str, *, xff: str) -> Any:
    return client.post(
        "/accounts/login/",
        {"username": username, "password": password},
        REMOTE_ADDR=ATTACKER,
        HTTP_X_FORWARDED_FOR=xff,
    )


def assert_locked_api(response: Any) -> None:
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "TOO_MANY_ATTEMPTS"
    assert error["message"] == lockout_message(15 * 60)
    assert error["requestId"]
    assert int(response["Retry-After"]) == 15 * 60
    assert "token" not in response.json()


def test_api_lockout_survives_rotating_forwarded_for(acme: Any) -> None:
    for i in range(LIMIT - 1):
        response = api_login("alice", "wrong", xff=f"10.0.0.{i}")
        assert response.status_code == 401, response.content
        assert response.json()["error"]["code"] == "INVALID_CREDENTIALS"

    api_login("alice", "wrong", xff="10.0.0.99")  # the limit-th failure
    sixth = api_login("alice", "wrong", xff="10.9.9.9")
    assert_locked_api(sixth)

    # the right password is refused too while locked out, and issues no token
    from approvals.models import ApiToken

    right = api_login("alice", "demo", xff="10.1.2.3")
    assert_locked_api(right)
    assert not ApiToken.objects.filter(user__username="alice").exists()


def test_api_lockout_is_per_address_too(acme: Any) -> None:
    for i in range(LIMIT):
        api_login("alice", "wrong", xff=f"10.0.0.{i}")

    # another account from the same address is refused, even with its right password
    assert_locked_api(api_login("bob", "demo", xff="10.7.7.7"))
    # the locked account from another address is refused: the account is locked as well
    assert_locked_api(api_login("alice", "demo", xff="", remote="192.0.2.50"))
    # another account from another address is not affected
    assert api_login("bob", "demo", xff="", remote="192.0.2.51").status_code == 200


def test_lockout_ends_after_the_cool_off(acme: Any) -> None:
    for i in range(LIMIT):
        api_login("alice", "wrong", xff=str(i))
    assert_locked_api(api_login("alice", "demo", xff="x"))

    # the failures are now older than the cool-off (15 minutes)
    from axes.models import AccessAttempt
    from django.db.models import F

    AccessAttempt.objects.update(attempt_time=F("attempt_time") - dt.timedelta(minutes=16))

    assert api_login("alice", "demo", xff="x").status_code == 200


def test_form_lockout_survives_rotating_forwarded_for(acme: Any) -> None:
    client = Client()
    for i in range(LIMIT - 1):
        response = form_login(client, "alice", "wrong", xff=f"10.0.0.{i}")
        assert response.status_code == 200
        assert b"didn&#x27;t match" in response.content or b"didn't match" in response.content

    form_login(client, "alice", "wrong", xff="10.0.0.99")
    sixth = form_login(client, "alice", "demo", xff="10.8.8.8")

    assert sixth.status_code == 429
    assert lockout_message(15 * 60).encode() in sixth.content
    assert b'name="username"' in sixth.content  # the form is still there
    assert "_auth_user_id" not in client.session
    assert client.get("/").status_code == 302  # not signed in


def test_form_and_api_share_one_count(acme: Any) -> None:
    client = Client()
    for i in range(3):
        form_login(client, "alice", "wrong", xff=str(i))
    for i in range(2):
        api_login("alice", "wrong", xff=str(i))

    assert_locked_api(api_login("alice", "demo", xff="new"))


def test_admin_sign_in_is_limited_too(acme: Any) -> None:
    client = Client()
    for i in range(LIMIT):
        client.post(
            "/admin/login/",
            {"username": "admin", "password": "wrong"},
            REMOTE_ADDR=ATTACKER,
            HTTP_X_FORWARDED_FOR=str(i),
        )
    response = client.post(
        "/admin/login/", {"username": "admin", "password": "demo"}, REMOTE_ADDR=ATTACKER
    )
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_success_below_the_limit_signs_in(acme: Any) -> None:
    for i in range(LIMIT - 2):
        api_login("alice", "wrong", xff=str(i))

    response = api_login("alice", "demo", xff="z")

    assert response.status_code == 200
    assert response.json()["token"]


@override_settings(APPROVALS_TRUSTED_PROXY_COUNT=1)
def test_behind_one_proxy_the_client_is_the_last_forwarded_entry(acme: Any) -> None:
    # Behind our proxy every request comes from the proxy's address; the proxy appends
    # the real client. What the client put before that entry changes nothing.
    proxy = "10.10.0.1"
    for i in range(LIMIT):
        api_login("alice", "wrong", xff=f"1.2.3.{i}, {ATTACKER}", remote=proxy)

    assert_locked_api(api_login("bob", "demo", xff=f"9.9.9.9, {ATTACKER}", remote=proxy))
    # a different real client behind the same proxy is its own address
    assert api_login("bob", "demo", xff="192.0.2.77", remote=proxy).status_code == 200


@pytest.mark.parametrize(
    ("count", "xff", "expected"),
    [
        (0, "1.1.1.1", "127.0.0.9"),
        (1, "6.6.6.6, 1.1.1.1", "1.1.1.1"),
        (2, "6.6.6.6, 1.1.1.1, 10.0.0.2", "1.1.1.1"),
        (2, "1.1.1.1", "1.1.1.1"),
        (1, "", "127.0.0.9"),
    ],
)
def test_client_ip(count: int, xff: str, expected: str) -> None:
    from django.test import RequestFactory

    from approvals.http.client_ip import client_ip

    request = RequestFactory().get("/", REMOTE_ADDR="127.0.0.9", HTTP_X_FORWARDED_FOR=xff)
    with override_settings(APPROVALS_TRUSTED_PROXY_COUNT=count):
        assert client_ip(request) == expected


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"], ids=["app", "admin"])
def test_a_user_name_longer_than_any_account_is_a_form_error_not_a_500(
    acme: Any, path: str
) -> None:
    from axes.models import AccessAttempt

    response = Client().post(path, {"username": "u" * 10_000, "password": "x"})

    assert response.status_code == 200  # the sign-in page again, with the error
    assert response.context["form"].errors["username"] == [USERNAME_TOO_LONG.format(limit=150)]
    assert not AccessAttempt.objects.exists()
