"""Rules compare amounts in the organisation's base currency: a start records the rate
it used in its WorkflowStarted event, a currency without a rate for the day is refused
in words and starts nothing (API and page), and a request goes on with the rate it
recorded whatever the rates say today."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from approvals import clock
from approvals.models import ExchangeRate, User, Workflow, WorkflowEvent
from approvals.runtime.rebuild import derive

from ..helpers import EXPENSE, decide, start_expense

pytestmark = pytest.mark.django_db


def _started(workflow_id: str) -> dict[str, Any]:
    event = WorkflowEvent.objects.get(workflow_id=workflow_id, seq=1)
    assert event.type == "WorkflowStarted"
    return dict(event.payload)


def test_999_usd_routes_as_its_83117_rupees_would(acme: Any, api: Any) -> None:
    alice = api("alice")

    dollars = start_expense(alice, 99_900, currency="USD")
    rupees = start_expense(alice, 8_311_680)

    assert dollars.status_code == rupees.status_code == 201
    assert dollars.json()["status"] == rupees.json()["status"] == "PENDING_MANAGER"
    conversion = _started(dollars.json()["workflowId"])["conversion"]
    assert conversion["base"] == "INR"
    assert conversion["rates"]["USD"]["rate"] == "83.2"
    assert conversion["rates"]["USD"]["factor"] == "83.2"
    assert _started(rupees.json()["workflowId"])["conversion"] == {"base": "INR", "rates": {}}


def test_a_currency_without_a_rate_for_the_day_is_refused_through_the_api(
    acme: Any, api: Any
) -> None:
    ExchangeRate.objects.filter(currency="USD").delete()
    before = (Workflow.objects.count(), WorkflowEvent.objects.count())

    response = start_expense(api("alice"), 99_900, currency="USD")

    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "NO_EXCHANGE_RATE"
    assert error["message"].startswith("There is no exchange rate from USD to INR for ")
    assert (Workflow.objects.count(), WorkflowEvent.objects.count()) == before


def test_a_currency_without_a_rate_for_the_day_is_refused_on_the_page(acme: Any) -> None:
    ExchangeRate.objects.filter(currency="EUR").delete()
    client = Client()
    client.force_login(User.objects.get(username="alice"))
    form = {
        "amountPaise": "999.00",
        "currency": "EUR",
        "department": "eng",
        "subject_id": "E-9",
        "idempotency_key": uuid.uuid4().hex,
    }

    response = client.post(f"/workflows/new?template={EXPENSE}", form)

    assert response.status_code == 400
    assert "There is no exchange rate from EUR to INR" in response.content.decode()
    assert Workflow.objects.count() == 0


def test_an_old_rate_is_refused_as_missing(acme: Any, api: Any) -> None:
    # only a rate from eight days ago is left
    ExchangeRate.objects.filter(currency="GBP").delete()
    eight_days_ago = clock.now().date() - dt.timedelta(days=8)
    ExchangeRate.objects.create(
        tenant=acme, base="INR", currency="GBP", on=eight_days_ago, rate=Decimal("105.4")
    )

    response = start_expense(api("alice"), 99_900, currency="GBP")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "NO_EXCHANGE_RATE"


def test_an_old_request_goes_on_and_replays_with_the_rate_it_recorded(acme: Any, api: Any) -> None:
    # given a 999 USD claim started at 83.20: the manager, then finance (no VP)
    started = start_expense(api("alice"), 99_900, currency="USD").json()
    workflow_id = started["workflowId"]
    # when today's rate would make it ₹1,99,800 (above the VP's ₹1,00,000)
    ExchangeRate.objects.filter(currency="USD").update(rate=Decimal("200"))
    approved = decide(api("bob"), workflow_id, "approve", "rq-bob")

    # then it goes on at the recorded rate, and its history replays to the same state
    assert approved.status_code == 200
    assert approved.json()["status"] == "PENDING_FINANCE"
    wf = Workflow.objects.get(pk=workflow_id)
    assert derive(wf).state.conversion["rates"]["USD"]["rate"] == "83.2"


def test_a_claim_in_the_base_currency_asks_no_rate(acme: Any, api: Any) -> None:
    ExchangeRate.objects.all().delete()

    response = start_expense(api("alice"), 99_900)

    assert response.status_code == 201
    assert response.json()["status"] == "APPROVED"  # under ₹1,000: approved at once


def test_the_request_page_shows_the_amount_in_its_own_currency_and_as_the_rules_saw_it(
    acme: Any, api: Any
) -> None:
    workflow_id = start_expense(api("alice"), 99_900, currency="USD").json()["workflowId"]
    client = Client()
    client.force_login(User.objects.get(username="alice"))

    page = client.get(f"/workflows/{workflow_id}").content.decode()

    # the rate of the start's day in the organisation's zone (selectors/rates.py)
    day = f"{clock.now().astimezone(ZoneInfo(acme.time_zone or 'UTC')):%-d %b %Y}"
    assert "<dd>$999.00</dd>" in page
    assert f"$999.00 ≈ ₹83,117 at 83.20 on {day}" in page
    assert "₹999.00" not in page
