"""The new-request form's "Who will approve this": the route in words, from the real
directory, for the person who may start the template; nothing written."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import clock
from approvals.models import Delegation, User
from approvals.notifications.format import money_format
from approvals.web.route_preview import FILL_IN, NOT_YOURS

from .support import signed_in

pytestmark = pytest.mark.django_db

URL = "/workflows/new/route"


def _route(who: str, **fields: str) -> Any:
    params = {"template": "expense-approval", "currency": "INR", "department": "eng", **fields}
    return signed_in(who).get(URL, params, HTTP_ACCEPT="application/json")


def _rows() -> dict[str, int]:
    # every table of every app: the approvals app's, mail, audit, sessions, sign-in logs
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()}


def test_the_route_names_the_manager_and_finance_and_victor_above_the_threshold(acme):
    below = _route("alice", amountPaise="45000")
    assert below.status_code == 200
    text = below.json()["route"]
    assert text.startswith("It will go to Bob (your manager), then Finance (")
    lakh = money_format(minor=10_000_000, currency="INR")  # ₹1,00,000.00
    assert f"Victor too if the amount is above {lakh}" in text

    above = _route("alice", amountPaise="150000").json()["route"]
    assert above.startswith("It will go to Bob (your manager), then Victor, then Finance (")
    assert "too if" not in above
    # people's words: no user names, template keys, step ids or paise
    for word in ("bob", "victor", "expense-approval", "vp", "Paise", "15000000"):
        assert word not in above


def test_a_stand_in_is_named_for_the_absent_approver(acme):
    bob, ivan = User.objects.get(username="bob"), User.objects.get(username="ivan")
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=bob,
        delegate=ivan,
        starts_at=now - dt.timedelta(days=1),
        ends_at=now + dt.timedelta(days=3),
    )
    text = _route("alice", amountPaise="45000").json()["route"]
    assert text.startswith("It will go to Ivan (for Bob, who is away), then Finance")


def test_an_incomplete_form_asks_to_fill_it_in(acme):
    assert _route("alice").json()["route"] == FILL_IN
    assert _route("alice", amountPaise="not a number").json()["route"] == FILL_IN


def test_nothing_is_written(acme):
    # given alice signed in (signing in writes its own rows)
    client = signed_in("alice")
    params = {"template": "expense-approval", "currency": "INR", "department": "eng"}
    before = _rows()
    # when the form asks for the route, past the threshold
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(URL, {**params, "amountPaise": "150000"})
    # then it is answered, every table holds the rows it held, and no statement wrote
    assert answer.status_code == 200 and answer.json()["route"].startswith("It will go to")
    assert _rows() == before
    writes = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]
    assert writes == []


def test_only_someone_who_may_start_the_template_is_answered(acme):
    # an auditor starts nothing; an unknown template reads the same
    refused = _route("audrey", amountPaise="45000")
    assert refused.status_code == 404 and refused.json() == {"error": NOT_YOURS}
    unknown = signed_in("alice").get(URL, {"template": "no-such"})
    assert unknown.status_code == 404 and unknown.json() == {"error": NOT_YOURS}
    # and one must be signed in
    from django.test import Client

    assert Client().get(URL, {"template": "expense-approval"}).status_code == 302


def test_the_form_carries_the_preview_box_and_its_script(acme):
    body = signed_in("alice").get("/workflows/new?template=expense-approval").content.decode()
    assert 'data-route="/workflows/new/route?template=expense-approval"' in body
    assert 'id="route-preview" hidden' in body  # without the script nothing shows
    assert "route_preview" in body and "<script>" not in body


def test_route_previews_are_limited_per_person(acme, monkeypatch):
    from django.core.cache import cache

    from approvals.web.route_preview import TOO_MANY, PreviewThrottle

    cache.clear()
    monkeypatch.setattr(PreviewThrottle, "rate", "2/minute")
    client = signed_in("alice")
    params = {"template": "expense-approval", "currency": "INR", "department": "eng"}
    answers = [client.get(URL, {**params, "amountPaise": "45000"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert answers[2].json() == {"error": TOO_MANY}
    # another person is counted on their own
    assert signed_in("bob").get(URL, {**params, "amountPaise": "45000"}).status_code == 200


def test_a_route_that_would_fail_is_said_in_the_steps_words_not_the_engines(acme):
    from approvals.models import OrgGroup, Tenant
    from approvals.services.templates import workflow_template_publish

    tenant = Tenant.objects.get(slug="acme")
    OrgGroup.objects.create(tenant=tenant, key="nobody-here", name="Nobody here")
    workflow_template_publish(
        tenant=tenant,
        definition={
            "key": "empty-desk",
            "title": "Empty desk",
            "steps": [
                {
                    "id": "desk_check",
                    "title": "Desk check",
                    "kind": "approval",
                    "approvers": [{"group": "nobody-here"}],
                }
            ],
        },
    )

    answer = signed_in("alice").get(URL, {"template": "empty-desk"}).json()["route"]

    assert answer.startswith("As it stands this request would not go through: ")
    assert "Desk check" in answer
    for word in ("desk_check", "nobody-here", "NO_APPROVERS", "empty-desk"):
        assert word not in answer, answer


def test_999_usd_previews_its_conversion_and_the_route_its_rupees_take(acme):
    text = _route("alice", amountPaise="999.00", currency="USD").json()["route"]

    # the rate of the start's day in the organisation's zone (selectors/rates.py)
    day = f"{clock.now().astimezone(ZoneInfo(acme.time_zone or 'UTC')):%-d %b %Y}"
    assert text.startswith(f"$999.00 ≈ ₹83,117 at 83.20 on {day}: it will go to Bob (your manager)")
    # the rules' threshold is in rupees, never with the dollar sign
    assert (
        f"Victor too if the amount is above {money_format(minor=10_000_000, currency='INR')}"
        in text
    )
    assert "$1,000.00" not in text and "$1,00,000.00" not in text


def test_a_currency_without_a_rate_previews_the_refusal(acme):
    from approvals.models import ExchangeRate

    ExchangeRate.objects.filter(currency="GBP").delete()

    text = _route("alice", amountPaise="999.00", currency="GBP").json()["route"]

    assert text.startswith("There is no exchange rate from GBP to INR for ")
