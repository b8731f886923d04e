"""Out-of-office times are held to 1970..2200 at the page's form, the admin, the service
and the database; and one row outside (stored before the database refused it) never
stops the organisation: the directory skips it, logs it, and the attention page shows
it."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client

from approvals.models import Delegation, PendingTask, User
from approvals.models.time_bounds import DAY_OUT_OF_RANGE, MOMENT_OUT_OF_RANGE
from approvals.services.delegations import DelegationRefused, delegation_set

from ..helpers import start_expense

pytestmark = pytest.mark.django_db

OUT_OF_OFFICE = "/account/out-of-office"
ADMIN_ADD = "/admin/approvals/delegation/add/"
ATTENTION = "/admin/approvals/workflow/attention/"


def _signed_in(username: str, zone: str = "") -> Client:
    user = User.objects.get(username=username)
    if zone:
        user.time_zone = zone
        user.save(update_fields=["time_zone"])
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    ("first", "last", "field"),
    [
        pytest.param("0001-01-01", "2026-12-31", "first_day", id="year-1"),
        pytest.param("1969-12-31", "2026-12-31", "first_day", id="before-1970"),
        pytest.param("2026-12-01", "9999-12-31", "last_day", id="year-9999"),
        pytest.param("2026-12-01", "2201-01-01", "last_day", id="after-2200"),
    ],
)
def test_out_of_office_outside_1970_to_2200_is_a_form_error_and_sets_nothing(
    acme, first, last, field
):
    # given an employee east of Greenwich, where year 1 would be a BC timestamp
    client = _signed_in("bob", "Asia/Kolkata")

    response = client.post(
        OUT_OF_OFFICE, {"delegate": "victor", "first_day": first, "last_day": last}
    )

    assert response.status_code == 400
    assert response.context["form"].errors[field] == [DAY_OUT_OF_RANGE]
    assert Delegation.objects.count() == 0


def test_out_of_office_on_the_last_day_of_2200_is_taken(acme):
    # the edge of the range, from the zone furthest west
    client = _signed_in("bob", "Etc/GMT+12")

    response = client.post(
        OUT_OF_OFFICE, {"delegate": "victor", "first_day": "1970-01-01", "last_day": "2200-12-31"}
    )

    assert response.status_code == 302
    assert Delegation.objects.count() == 1


def test_the_service_refuses_a_delegation_outside_the_range(acme):
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")
    east = dt.timezone(dt.timedelta(hours=5, minutes=30))

    with pytest.raises(DelegationRefused, match=MOMENT_OUT_OF_RANGE):
        delegation_set(
            user=bob,
            delegate=victor,
            starts_at=dt.datetime(1, 1, 1, tzinfo=east),
            ends_at=dt.datetime(2026, 12, 31, tzinfo=east),
        )
    assert Delegation.objects.count() == 0


@pytest.mark.parametrize(
    ("starts", "ends", "field"),
    [
        pytest.param("0001-01-01", "2026-12-31", "starts_at", id="year-1"),
        pytest.param("2026-12-01", "9999-12-31", "ends_at", id="year-9999"),
    ],
)
def test_admin_delegation_outside_the_range_is_a_form_error_and_saves_nothing(
    acme, starts, ends, field
):
    client = _signed_in("fiona", "Asia/Kolkata")
    form = {
        "tenant": acme.pk,
        "user": User.objects.get(username="bob").pk,
        "delegate": User.objects.get(username="victor").pk,
        "starts_at_0": starts,
        "starts_at_1": "00:00:00",
        "ends_at_0": ends,
        "ends_at_1": "23:00:00",
        "reason": "",
    }

    response = client.post(ADMIN_ADD, form)

    assert response.status_code == 200  # the admin shows its form again
    assert MOMENT_OUT_OF_RANGE in response.context["adminform"].form.errors[field]
    assert Delegation.objects.count() == 0


def test_the_database_refuses_a_delegation_outside_the_range(acme):
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")

    with pytest.raises(IntegrityError), transaction.atomic():
        Delegation.objects.create(
            tenant=acme,
            user=bob,
            delegate=victor,
            starts_at=dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=5))),
            ends_at=dt.datetime(2026, 12, 31, tzinfo=dt.UTC),
        )
    assert Delegation.objects.count() == 0


@pytest.fixture
def unreadable_delegation(acme: Any) -> None:
    """Bob away from a BC first day, to Victor: a row stored before the database's
    constraint (dropped here, in this test's transaction only) refused it."""
    table = Delegation._meta.db_table
    bob, victor = User.objects.get(username="bob"), User.objects.get(username="victor")
    with connection.cursor() as cursor:
        cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "delegation_bounded_times"')
        cursor.execute(
            f'INSERT INTO "{table}" (tenant_id, user_id, delegate_id, starts_at, ends_at, reason)'
            " VALUES (%s, %s, %s, '0001-12-31 18:06:32+00 BC', '2200-12-31 00:00+00', '')",
            [acme.pk, bob.pk, victor.pk],
        )


def test_one_unreadable_out_of_office_does_not_stop_starts(
    acme, api, unreadable_delegation, caplog
):
    with caplog.at_level(logging.WARNING, logger="approvals.runtime.directory"):
        response = start_expense(api("alice"), 4_500_000)

    assert response.status_code == 201, response.content
    # skipped: the task stays with bob, the manager
    task = PendingTask.objects.get(workflow_id=response.json()["workflowId"])
    assert task.assignee.username == "bob"
    assert any("bob" in r.getMessage() and "victor" in r.getMessage() for r in caplog.records)


def test_an_unreadable_out_of_office_is_shown_on_the_attention_page(acme, unreadable_delegation):
    response = _signed_in("olga").get(ATTENTION)

    assert response.status_code == 200
    shown = response.content.decode()
    assert "Out-of-office settings that are ignored" in shown
    assert "<td>bob</td><td>victor</td>" in shown
