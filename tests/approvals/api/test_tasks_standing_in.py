"""GET /api/me/tasks lists, with the person's own tasks, those of a colleague who is out
of office and names them to decide for them, each marked onBehalfOf that colleague,
as the inbox page does; the list stays one query and ends with the absence."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import clock
from approvals.models import Delegation, User

from ..helpers import decide
from ..pages.support import expense_started

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)


def _away(who: str, stand_in: str, *, starts: dt.timedelta, ends: dt.timedelta) -> Delegation:
    user = User.objects.get(username=who)
    now = clock.now()
    return Delegation.objects.create(
        tenant_id=user.member_tenant_id,
        user=user,
        delegate=User.objects.get(username=stand_in),
        starts_at=now + starts,
        ends_at=now + ends,
    )


def _items(client: Any, **params: object) -> list[dict[str, Any]]:
    response = client.get("/api/me/tasks", params)
    assert response.status_code == 200, response.content
    return response.json()["items"]


def test_the_stand_in_lists_the_absent_colleagues_tasks_marked_for_them(acme, api):
    # given bob holds two requests and ivan one of his own (none yet)
    first = expense_started("API-SI-1")
    second = expense_started("API-SI-2")
    ivan = api("ivan")
    assert _items(ivan) == []

    # when bob is away with ivan standing in
    _away("bob", "ivan", starts=-DAY, ends=3 * DAY)

    # then ivan's list holds bob's tasks, each marked on behalf of bob, in one query
    with CaptureQueriesContext(connection) as q:
        items = _items(ivan)
    assert sorted(i["workflowId"] for i in items) == sorted([first, second])
    assert {i["onBehalfOf"] for i in items} == {"bob"}
    assert len([x for x in q.captured_queries if "pendingtask" in x["sql"]]) == 1
    # bob's own list is as it was: his tasks, on nobody's behalf
    assert {i["onBehalfOf"] for i in _items(api("bob"))} == {None}
    # and the pages walk both with the cursor
    page = ivan.get("/api/me/tasks", {"limit": 1}).json()
    rest = ivan.get("/api/me/tasks", {"limit": 1, "cursor": page["nextCursor"]}).json()
    assert [page["items"][0]["workflowId"], rest["items"][0]["workflowId"]] == [
        i["workflowId"] for i in items
    ]
    assert rest["nextCursor"] is None

    # and ivan decides one of them for bob, as the list says
    answer = decide(ivan, first, "approve", uuid.uuid4().hex, onBehalfOf="bob")
    assert answer.status_code == 200, answer.content
    assert [i["workflowId"] for i in _items(ivan)] == [second]


def test_an_absence_not_yet_begun_or_ended_lists_nothing_for_the_stand_in(acme, api):
    expense_started("API-SI-3")
    _away("bob", "ivan", starts=DAY, ends=3 * DAY)
    _away("bob", "ivan", starts=-3 * DAY, ends=-DAY)
    assert _items(api("ivan")) == []
