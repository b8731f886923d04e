"""Deactivating someone from the user admin (the "active" box, or the list's action)
goes through the directory service: their tasks are handed on, or, when nobody can take
one, they stay active and the page says why."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from approvals.models import User

from .test_deactivate import bobs_memos, holders, moves  # noqa: F401

pytestmark = pytest.mark.django_db


def superuser() -> Client:
    client = Client()
    client.force_login(User.objects.get(username="admin"))
    return client


def change_form(client: Client, person: User) -> dict[str, Any]:
    page = client.get(f"/admin/approvals/user/{person.pk}/change/")
    assert page.status_code == 200
    form = page.context["adminform"].form
    data: dict[str, Any] = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if value is None or name == "password":
            continue
        if isinstance(value, list | tuple):
            data[name] = [getattr(v, "pk", v) for v in value]
        elif isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = getattr(value, "pk", value)
    data["date_joined_0"], data["date_joined_1"] = (
        person.date_joined.strftime("%Y-%m-%d"),
        person.date_joined.strftime("%H:%M:%S"),
    )
    data.pop("date_joined", None)
    data.pop("last_login", None)
    return data


def test_unticking_active_hands_the_tasks_on(bobs_memos):  # noqa: F811
    client = superuser()
    bob = User.objects.get(username="bob")
    data = change_form(client, bob)
    data.pop("is_active")

    reply = client.post(f"/admin/approvals/user/{bob.pk}/change/", data, follow=True)

    assert reply.status_code == 200
    assert "Deactivated bob; 3 open tasks handed on to victor." in reply.content.decode()
    assert not User.objects.get(username="bob").is_active
    for wid in bobs_memos:
        assert holders(wid) == {"victor"}
        assert moves(wid) == [("bob", "victor", "admin")]


def test_nobody_to_take_a_task_keeps_them_active_and_says_why(bobs_memos):  # noqa: F811
    User.objects.filter(username="bob").update(manager=None)
    client = superuser()
    bob = User.objects.get(username="bob")
    data = change_form(client, bob)
    data.pop("is_active")

    reply = client.post(f"/admin/approvals/user/{bob.pk}/change/", data, follow=True)

    shown = [str(m) for m in reply.context["messages"]]
    assert any("bob cannot be deactivated" in m for m in shown), shown
    assert User.objects.get(username="bob").is_active
    assert all(holders(w) == {"bob"} for w in bobs_memos)


def test_the_list_action_deactivates(bobs_memos):  # noqa: F811
    bob = User.objects.get(username="bob")

    reply = superuser().post(
        "/admin/approvals/user/",
        {"action": "deactivate", "_selected_action": [bob.pk]},
        follow=True,
    )

    assert "Deactivated bob" in reply.content.decode()
    assert all(holders(w) == {"victor"} for w in bobs_memos)
