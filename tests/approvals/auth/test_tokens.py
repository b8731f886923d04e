"""API tokens: hashed at rest, expiring, revocable, revoked with the password."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from approvals import clock
from approvals.api.auth import MALFORMED_HEADER, MalformedBearer, bearer_token
from approvals.models import ApiToken, User
from approvals.services import tokens as token_services
from approvals.services.tokens import token_issue, token_revoke, tokens_revoke_for_user


def bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def assert_unauthenticated(response: Any, message: str) -> None:
    assert response.status_code == 401, response.content
    assert response["WWW-Authenticate"] == "Bearer"
    error = response.json()["error"]
    assert error["code"] == "UNAUTHENTICATED"
    assert error["message"] == message


def sign_in(username: str = "alice") -> dict[str, Any]:
    response = APIClient().post(
        "/api/auth/token", {"username": username, "password": "demo"}, format="json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_sign_in_issues_an_expiring_token(acme: Any) -> None:
    before = clock.now()

    body = sign_in()

    assert set(body) == {"token", "expiresAt"}
    token = ApiToken.objects.get(user__username="alice")
    expires = dt.datetime.fromisoformat(body["expiresAt"].replace("Z", "+00:00"))
    assert expires == token.expires_at
    assert dt.timedelta(days=30) <= token.expires_at - before < dt.timedelta(days=30, minutes=1)
    assert bearer(body["token"]).get("/api/me/tasks").status_code == 200


def test_the_database_holds_only_the_digest(acme: Any) -> None:
    alice = User.objects.get(username="alice")

    token, secret = token_issue(user=alice, name="ci")

    assert token.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert token.prefix == secret[:8]
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM approvals_apitoken WHERE id = %s", [token.pk])
        row = cursor.fetchone()
    assert secret not in [str(v) for v in row]
    assert not any(secret in str(v) for v in row)


def test_scopes_are_stored(acme: Any) -> None:
    alice = User.objects.get(username="alice")

    scoped, _ = token_issue(
        user=alice, may_start=["expense-approval"], may_signal=["contract_signed"]
    )
    unscoped, _ = token_issue(user=alice)

    scoped.refresh_from_db()
    unscoped.refresh_from_db()
    assert scoped.may_start == ["expense-approval"]
    assert scoped.may_signal == ["contract_signed"]
    assert unscoped.may_start is None and unscoped.may_signal is None


def test_request_auth_is_the_token(acme: Any) -> None:
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from approvals.api.auth import BearerTokenAuthentication

    token, secret = token_issue(user=User.objects.get(username="bob"), may_start=["x"])
    request = Request(APIRequestFactory().get("/", HTTP_AUTHORIZATION=f"Bearer {secret}"))

    user, auth = BearerTokenAuthentication().authenticate(request)  # type: ignore[misc]

    assert user.username == "bob"
    assert auth.pk == token.pk and auth.may_start == ["x"]


def test_expired_token_is_401(acme: Any) -> None:
    _, secret = token_issue(user=User.objects.get(username="alice"), ttl_seconds=60)
    assert bearer(secret).get("/api/me/tasks").status_code == 200

    with clock.shifted(dt.timedelta(seconds=61)):
        response = bearer(secret).get("/api/me/tasks")

    assert_unauthenticated(response, token_services.TOKEN_EXPIRED)


def test_unknown_and_malformed_tokens_are_401(acme: Any) -> None:
    assert_unauthenticated(bearer("not-a-token").get("/api/me/tasks"), token_services.TOKEN_UNKNOWN)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer two parts")
    assert client.get("/api/me/tasks").status_code == 401


def test_logout_revokes_the_token_used(acme: Any) -> None:
    first = sign_in()["token"]
    second = sign_in()["token"]

    response = bearer(first).post("/api/auth/logout")

    assert response.status_code == 204
    assert_unauthenticated(bearer(first).get("/api/me/tasks"), token_services.TOKEN_REVOKED)
    assert bearer(second).get("/api/me/tasks").status_code == 200  # only the one used
    assert_unauthenticated(bearer(first).post("/api/auth/logout"), token_services.TOKEN_REVOKED)


def test_logout_with_a_session_is_400_and_revokes_nothing(acme: Any) -> None:
    _, secret = token_issue(user=User.objects.get(username="alice"))
    client = APIClient()
    client.force_login(User.objects.get(username="alice"))

    response = client.post("/api/auth/logout")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "NOT_A_TOKEN"
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()
    assert bearer(secret).get("/api/me/tasks").status_code == 200


def test_rotation_keeps_the_old_token_until_it_is_revoked(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    old, old_secret = token_issue(user=alice)
    _, new_secret = token_issue(user=alice)

    assert bearer(old_secret).get("/api/me/tasks").status_code == 200
    token_revoke(token=old)

    assert bearer(old_secret).get("/api/me/tasks").status_code == 401
    assert bearer(new_secret).get("/api/me/tasks").status_code == 200


def test_password_change_revokes_every_token_of_that_user(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    secrets = [token_issue(user=alice)[1] for _ in range(2)]
    _, bobs = token_issue(user=User.objects.get(username="bob"))

    alice.set_password("a-new-long-password")
    alice.save()

    for secret in secrets:
        assert_unauthenticated(bearer(secret).get("/api/me/tasks"), token_services.TOKEN_REVOKED)
    assert bearer(bobs).get("/api/me/tasks").status_code == 200


def test_other_saves_keep_tokens(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    _, secret = token_issue(user=alice)

    alice.first_name = "Alicia"
    alice.save()
    alice.save(update_fields=["last_login"])

    assert bearer(secret).get("/api/me/tasks").status_code == 200


def test_deactivation_revokes_tokens(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    _, secret = token_issue(user=alice)

    alice.is_active = False
    alice.save(update_fields=["is_active"])

    assert_unauthenticated(bearer(secret).get("/api/me/tasks"), token_services.TOKEN_REVOKED)
    assert ApiToken.objects.get(user=alice).revoked_at is not None


def test_inactive_user_is_refused_even_with_a_live_token(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    _, secret = token_issue(user=alice)
    User.objects.filter(pk=alice.pk).update(is_active=False)  # bypasses the signal

    assert_unauthenticated(bearer(secret).get("/api/me/tasks"), token_services.USER_INACTIVE)


def test_last_used_is_written_at_most_once_a_minute(acme: Any) -> None:
    token, secret = token_issue(user=User.objects.get(username="alice"))
    client = bearer(secret)

    client.get("/api/me/tasks")
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    client.get("/api/me/tasks")
    token.refresh_from_db()
    assert token.last_used_at == first
    with clock.shifted(dt.timedelta(minutes=2)):
        client.get("/api/me/tasks")
    token.refresh_from_db()
    assert token.last_used_at is not None and token.last_used_at > first


def test_revoke_for_user_counts_live_tokens(acme: Any) -> None:
    alice = User.objects.get(username="alice")
    token_issue(user=alice)
    token_issue(user=alice)

    assert tokens_revoke_for_user(user=alice) == 2
    assert tokens_revoke_for_user(user=alice) == 0


def test_issue_token_command(acme: Any) -> None:
    out = io.StringIO()

    call_command(
        "issue_token",
        "ivan",
        "--name",
        "erp",
        "--ttl-seconds",
        "3600",
        "--start",
        "purchase-request",
        "--signal",
        "contract_signed",
        "goods_received",
        stdout=out,
        stderr=io.StringIO(),
    )

    secret = out.getvalue().strip()
    token = ApiToken.objects.get(digest=hashlib.sha256(secret.encode()).hexdigest())
    assert token.user.username == "ivan" and token.name == "erp"
    assert token.may_start == ["purchase-request"]
    assert token.may_signal == ["contract_signed", "goods_received"]
    assert dt.timedelta(minutes=59) < token.expires_at - token.created_at <= dt.timedelta(hours=1)
    assert bearer(secret).get("/api/me/tasks").status_code == 200


@pytest.mark.parametrize("args", [["nobody"], ["ivan", "--ttl-seconds", "0"]])
def test_issue_token_command_refuses_bad_input(acme: Any, args: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("issue_token", *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert not ApiToken.objects.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            ["--ttl-seconds", "99999999999999999999"],
            token_services.TTL_OUT_OF_RANGE,
            id="ttl-huge",
        ),
        pytest.param(
            ["--ttl-seconds", str(token_services.TTL_MAX_SECONDS + 1)],
            token_services.TTL_OUT_OF_RANGE,
            id="ttl-past-the-most",
        ),
        pytest.param(["--ttl-seconds", "-5"], token_services.TTL_OUT_OF_RANGE, id="ttl-negative"),
        pytest.param(["--name", "n" * 101], token_services.NAME_TOO_LONG, id="name-101"),
        pytest.param(["--name", "a\x00b"], token_services.TEXT_NUL, id="name-nul"),
        pytest.param(["--start", "expense\x00"], token_services.TEXT_NUL, id="start-nul"),
        pytest.param(["--signal", "go\x00"], token_services.TEXT_NUL, id="signal-nul"),
    ],
)
def test_issue_token_command_refuses_out_of_range_input_in_one_line(
    acme: Any, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError) as refused:
        call_command("issue_token", "ivan", *args, stdout=io.StringIO(), stderr=io.StringIO())

    assert str(refused.value) == message
    assert not ApiToken.objects.exists()


def test_the_longest_name_and_time_a_token_may_have_are_taken(acme: Any) -> None:
    token, _ = token_issue(
        user=User.objects.get(username="ivan"),
        name="n" * 100,
        ttl_seconds=token_services.TTL_MAX_SECONDS,
    )
    assert len(token.name) == 100


def test_issue_token_command_refuses_a_user_name_with_a_nul_in_one_line(acme: Any) -> None:
    from approvals.management.commands.issue_token import NO_SUCH_USER

    with pytest.raises(CommandError) as refused:
        call_command("issue_token", "iv\x00an", stdout=io.StringIO(), stderr=io.StringIO())

    assert str(refused.value) == NO_SUCH_USER.format(username="iv\x00an")
    assert not ApiToken.objects.exists()


def test_admin_lists_tokens_for_superusers_and_revokes(acme: Any) -> None:
    token, secret = token_issue(user=User.objects.get(username="alice"), name="laptop")
    admin = Client()
    admin.force_login(User.objects.get(username="admin"))

    listing = admin.get("/admin/approvals/apitoken/")
    assert listing.status_code == 200
    assert token.prefix.encode() in listing.content
    assert secret.encode() not in listing.content

    response = admin.post(
        "/admin/approvals/apitoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None


def test_admin_token_list_is_closed_to_other_staff(acme: Any) -> None:
    token, _ = token_issue(user=User.objects.get(username="alice"))
    from django.contrib.auth.models import Permission

    staff = User.objects.get(username="fiona")
    staff.is_staff = True
    staff.save()
    # even with the model permissions: superusers only, for now
    staff.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_apitoken", "change_apitoken"])
    )
    client = Client()
    client.force_login(staff)

    assert client.get("/admin/approvals/apitoken/").status_code == 403
    response = client.post(
        "/admin/approvals/apitoken/", {"action": "revoke", "_selected_action": [token.pk]}
    )
    assert response.status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("", None),
        (b"", None),
        ("Basic YWxpY2U6ZGVtbw==", None),
        ("Token abc", None),
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER abc", "abc"),
        ("  Bearer \t abc  ", "abc"),
        (b"Bearer abc", "abc"),
    ],
)
def test_the_bearer_header_gives_its_token_or_none_for_another_scheme(
    header: str | bytes, token: str | None
) -> None:
    assert bearer_token(header) == token


MALFORMED_BEARERS = ["Bearer", "bearer   ", "Bearer a b", "Bearer tökén", "Bearer 令牌"]


@pytest.mark.parametrize("header", [*MALFORMED_BEARERS, b"Bearer \xf6"])
def test_a_malformed_bearer_header_is_refused_by_the_one_parser(header: str | bytes) -> None:
    with pytest.raises(MalformedBearer, match="Authorization: Bearer <token>"):
        bearer_token(header)


@pytest.mark.parametrize("header", MALFORMED_BEARERS)
def test_the_api_answers_a_malformed_bearer_header_401_even_beside_a_session(
    acme: Any, header: str
) -> None:
    client = APIClient()
    client.force_login(User.objects.get(username="alice"))  # a session, which loses
    client.credentials(HTTP_AUTHORIZATION=header)

    assert_unauthenticated(client.get("/api/me/tasks"), MALFORMED_HEADER)


def test_a_lowercase_keyword_is_a_bearer_token_and_basic_is_left_to_the_session(
    acme: Any,
) -> None:
    _, secret = token_issue(user=User.objects.get(username="alice"))
    lower = APIClient()
    lower.credentials(HTTP_AUTHORIZATION=f"bearer {secret}")
    assert lower.get("/api/me/tasks").status_code == 200

    basic = APIClient()
    basic.credentials(HTTP_AUTHORIZATION="Basic YWxpY2U6ZGVtbw==")
    refused = basic.get("/api/me/tasks")
    assert refused.status_code == 401 and refused.json()["error"]["message"] != MALFORMED_HEADER
    basic.force_login(User.objects.get(username="alice"))
    assert basic.get("/api/me/tasks").status_code == 200  # the session, as before
