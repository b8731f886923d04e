"""Admins act only as themselves: an organisation admin cannot deactivate a superuser or
anyone outside her organisation (the API, the directory sync), and nobody makes a
delegation from someone else to themselves (the admin's form, new or changed), since
the delegate then decides that person's steps "on behalf of" them."""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from approvals import access, clock
from approvals.models import ApiToken, Delegation, Tenant, User
from approvals.services.delegations import DelegationRefused, delegation_check

pytestmark = pytest.mark.django_db


def _user(name: str) -> User:
    return User.objects.get(username=name)


# -- deactivation ---------------------------------------------------------------------------


def test_an_org_admin_cannot_deactivate_the_superuser_through_the_api(acme: Any, api: Any) -> None:
    superuser_client = api("admin")  # the superuser's token, which must keep working
    tokens = ApiToken.objects.filter(user__username="admin", revoked_at__isnull=True).count()

    reply = api("olga").post("/api/users/admin/deactivate", {"reason": "x"}, format="json")

    assert reply.status_code == 403, reply.content
    assert reply.json()["error"]["code"] == "FORBIDDEN"
    assert _user("admin").is_active
    assert (
        ApiToken.objects.filter(user__username="admin", revoked_at__isnull=True).count() == tokens
    )
    assert superuser_client.get("/api/me/tasks").status_code == 200


def test_a_deactivations_not_found_and_refused_answers_are_in_the_api_schema(
    acme: Any, api: Any
) -> None:
    schema = api("olga").get("/api/schema/", HTTP_ACCEPT="application/json").json()
    documented = schema["paths"]["/api/users/{username}/deactivate"]["post"]["responses"]

    nobody = api("olga").post("/api/users/nobody-here/deactivate", {"reason": "x"}, format="json")
    first = api("olga").post("/api/users/victor/deactivate", {"reason": "x"}, format="json")
    again = api("olga").post("/api/users/victor/deactivate", {"reason": "x"}, format="json")

    assert (nobody.status_code, first.status_code, again.status_code) == (404, 200, 409)
    assert again.json()["error"]["code"] == "DEACTIVATION_REFUSED"
    assert {"404", "409"} <= set(documented)
    assert "DEACTIVATION_REFUSED" in documented["409"]["description"]


def test_may_deactivate_refuses_superusers_and_other_organisations(acme: Any) -> None:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gina = User.objects.create_user("gina", password="pw", tenant=globex)
    olga, admin = _user("olga"), _user("admin")
    root = User.objects.create_superuser("root", password="pw", tenant=None)

    assert access.may_deactivate(olga, _user("bob"))
    assert not access.may_deactivate(olga, admin)
    assert not access.may_deactivate(olga, root)
    assert not access.may_deactivate(olga, gina)
    assert not access.may_deactivate(olga, olga)
    # the directory sync (no one signed in) deactivates people, never a superuser
    assert access.may_deactivate(None, _user("bob"))
    assert not access.may_deactivate(None, admin)
    # a superuser may deactivate anyone but themselves
    assert access.may_deactivate(admin, root)
    assert not access.may_deactivate(admin, admin)


def _directory(tmp_path: Path, rows: list[dict[str, Any]]) -> str:
    path = tmp_path / "people.json"
    path.write_text(json.dumps(rows))
    return str(path)


def test_sync_directory_cannot_deactivate_the_superuser(acme: Any, tmp_path: Path) -> None:
    path = _directory(
        tmp_path,
        [
            {"username": "admin", "email": "admin@acme.example", "active": False},
            {"username": "alice", "email": "alice@acme.example", "active": False},
        ],
    )

    with pytest.raises(CommandError) as refused:
        call_command("sync_directory", path, "--tenant", "acme", stdout=io.StringIO())

    assert str(refused.value) == access.SUPERUSER_NOT_DEACTIVATED.format(username="admin")
    assert _user("admin").is_active and _user("alice").is_active  # all or nothing


# -- delegations from someone else to oneself ------------------------------------------------


def _delegation_form(user: User, delegate: User) -> dict[str, Any]:
    now = clock.now()
    return {
        "user": user.pk,
        "delegate": delegate.pk,
        "starts_at_0": now.strftime("%Y-%m-%d"),
        "starts_at_1": "00:00:00",
        "ends_at_0": (now + dt.timedelta(days=30)).strftime("%Y-%m-%d"),
        "ends_at_1": "00:00:00",
        "reason": "leave",
    }


def _admin(username: str) -> Client:
    client = Client()
    client.force_login(_user(username))
    return client


@pytest.mark.parametrize("maker", ["fiona", "admin"])
def test_nobody_adds_a_delegation_from_someone_else_to_themselves_in_the_admin(
    acme: Any, maker: str
) -> None:
    response = _admin(maker).post(
        "/admin/approvals/delegation/add/", _delegation_form(_user("victor"), _user(maker))
    )

    assert response.status_code == 200  # the form again, with the error
    assert html.escape(access.FORBIDDEN_DELEGATE_TO_ONESELF) in response.content.decode()
    assert not Delegation.objects.exists()


def test_nobody_changes_a_delegation_of_someone_else_to_themselves_in_the_admin(
    acme: Any,
) -> None:
    now = clock.now()
    delegation = Delegation.objects.create(
        tenant=acme,
        user=_user("victor"),
        delegate=_user("farah"),
        starts_at=now,
        ends_at=now + dt.timedelta(days=30),
    )

    response = _admin("fiona").post(
        f"/admin/approvals/delegation/{delegation.pk}/change/",
        _delegation_form(_user("victor"), _user("fiona")),
    )

    assert response.status_code == 200
    assert html.escape(access.FORBIDDEN_DELEGATE_TO_ONESELF) in response.content.decode()
    delegation.refresh_from_db()
    assert delegation.delegate.username == "farah"


def test_a_finance_admin_still_sets_a_delegation_between_two_others(acme: Any) -> None:
    response = _admin("fiona").post(
        "/admin/approvals/delegation/add/", _delegation_form(_user("victor"), _user("farah"))
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    assert Delegation.objects.filter(user__username="victor", delegate__username="farah").exists()


def test_a_finance_admin_sets_her_own_delegation_in_the_admin(acme: Any) -> None:
    response = _admin("fiona").post(
        "/admin/approvals/delegation/add/", _delegation_form(_user("fiona"), _user("farah"))
    )

    assert response.status_code == 302
    assert Delegation.objects.filter(user__username="fiona", delegate__username="farah").exists()


def test_the_delegation_check_refuses_a_maker_naming_themselves(acme: Any) -> None:
    with pytest.raises(DelegationRefused, match=re.escape(access.FORBIDDEN_DELEGATE_TO_ONESELF)):
        delegation_check(user=_user("victor"), delegate=_user("fiona"), maker=_user("fiona"))
    delegation_check(user=_user("victor"), delegate=_user("farah"), maker=_user("fiona"))
    delegation_check(user=_user("fiona"), delegate=_user("farah"), maker=_user("fiona"))
