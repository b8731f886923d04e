"""Times in the person's own time zone: the zone they chose in their settings wins over
what the browser says, the browser's over UTC; mails show the due time in the zone the
recipient chose (UTC when none: a mail has no browser)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.test import Client

from approvals.models import Tenant, User, Workflow
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.models import MailKind, MailMessage
from approvals.words.zones import ZONE_INVALID, moment

from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db

SETTINGS = "/account/notifications"


def _choose(client: Client, zone: str) -> Any:
    return client.post(SETTINGS, {"mode": "immediate", "time_zone": zone})


def test_the_zone_a_person_chose_wins_over_the_browsers(acme):
    wid = expense_started("E-tz")
    alice = signed_in("alice", tz_cookie="Europe/London")
    assert "GMT" in alice.get(f"/workflows/{wid}").content.decode()

    assert _choose(alice, "Asia/Kolkata").status_code == 302
    assert User.objects.get(username="alice").time_zone == "Asia/Kolkata"
    page = alice.get(f"/workflows/{wid}").content.decode()
    assert "IST" in page and "GMT" not in page
    settings_page = alice.get(SETTINGS).content.decode()
    assert '<option value="Asia/Kolkata" selected>Asia/Kolkata</option>' in settings_page

    # blank: back to what the browser says
    assert _choose(alice, "").status_code == 302
    assert "GMT" in alice.get(f"/workflows/{wid}").content.decode()


def test_a_chosen_zone_needs_no_browser_cookie(acme):
    wid = expense_started("E-tz2")
    bob = signed_in("bob")
    assert "UTC" in bob.get(f"/workflows/{wid}").content.decode()
    _choose(bob, "America/New_York")
    assert "EST" in bob.get(f"/workflows/{wid}").content.decode()


@pytest.mark.parametrize(
    "zone", ["Mars/Olympus_Mons", "../etc/passwd", "Etc/GMT+5x", "x" * 65, "UTC\x00"]
)
def test_a_zone_that_is_no_zone_is_refused_and_nothing_changes(acme, zone):
    alice = signed_in("alice")
    _choose(alice, "Asia/Kolkata")

    response = _choose(alice, zone)

    assert response.status_code == 400
    assert response.context["form"].errors["time_zone"] == [ZONE_INVALID]
    assert User.objects.get(username="alice").time_zone == "Asia/Kolkata"


def test_a_date_in_a_search_is_a_day_in_the_chosen_zone(acme):
    wid = expense_started("E-tz3")
    Workflow.objects.filter(pk=wid).update(created_at=dt.datetime(2026, 3, 1, 20, 0, tzinfo=dt.UTC))
    alice = signed_in("alice", tz_cookie="Europe/London")
    day = {"createdAfter": "2026-03-02", "createdBefore": "2026-03-03"}
    assert wid not in alice.get("/search", day).content.decode()
    _choose(alice, "Asia/Kolkata")  # 01:30 on 2 March there
    assert wid in alice.get("/search", day).content.decode()


def test_a_task_mail_gives_the_due_time_in_the_recipients_zone(acme):
    User.objects.filter(username="bob").update(time_zone="Asia/Kolkata")
    wid = expense_started("E-mail-tz")
    row = MailMessage.objects.get(workflow_id=wid, kind=MailKind.TASK_ASSIGNED)
    wf = Workflow.objects.get(pk=wid)
    due = wf.created_at + dt.timedelta(days=2)  # the manager step's deadline, P2D

    expected = moment(due, dt.timezone(dt.timedelta(hours=5, minutes=30)))
    assert f"Due: {expected.removesuffix(' UTC+05:30')} IST" in mail_bodies(row)[0]
    assert "IST" in mail_bodies(row)[1]


def test_a_mail_to_someone_who_chose_no_zone_says_their_organisations_zone(acme):
    wid = expense_started("E-mail-ist")
    row = MailMessage.objects.get(workflow_id=wid, kind=MailKind.TASK_ASSIGNED)
    due_line = mail_bodies(row)[0].split("Due: ")[1].split("\n")[0]
    assert due_line.endswith(" IST")  # the demo organisation is in India


def test_a_mail_where_nobody_chose_a_zone_says_utc(acme):
    Tenant.objects.filter(pk=acme.pk).update(time_zone="")
    wid = expense_started("E-mail-utc")
    row = MailMessage.objects.get(workflow_id=wid, kind=MailKind.TASK_ASSIGNED)
    assert (
        "Due: " in mail_bodies(row)[0]
        and " UTC" in mail_bodies(row)[0].split("Due: ")[1].split("\n")[0]
    )
