"""People's time: a digest goes out at an hour of the person's own day (their zone, else
their organisation's), the same local hour across daylight-saving changes, driven by the
app's clock standing still (``clock.frozen``), never by sleeping; digests and link pages
name the zone of every time they show."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.test import Client

from approvals import clock
from approvals.models import Tenant, User
from approvals.notifications.digest import digest_due_at, mail_digest_send
from approvals.notifications.models import MailMessage, NotificationPreference
from approvals.notifications.views import DIGEST_HOUR_INVALID

from ..helpers import start_expense
from .test_links import links_for

UTC = dt.UTC


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "hour", "now", "due"),
    [
        # India: 09:00 IST is 03:30 UTC, before and after it on one day
        ("Asia/Kolkata", 9, "2026-12-07 04:00", "2026-12-07 03:30"),
        ("Asia/Kolkata", 9, "2026-12-07 03:29", "2026-12-06 03:30"),
        ("Asia/Kolkata", 9, "2026-12-07 03:30", "2026-12-07 03:30"),
        # New York moves to summer time on 14 March 2027: 09:00 is 14:00 UTC the day
        # before and 13:00 UTC that day
        ("America/New_York", 9, "2027-03-13 23:00", "2027-03-13 14:00"),
        ("America/New_York", 9, "2027-03-14 13:00", "2027-03-14 13:00"),
        # 02:00 does not happen that day in New York: when the clocks jump past it
        ("America/New_York", 2, "2027-03-14 12:00", "2027-03-14 07:00"),
        # London has 01:00 twice on 25 October 2026: the first of them
        ("Europe/London", 1, "2026-10-25 03:00", "2026-10-25 00:00"),
        # a zone east of UTC whose local day starts the UTC day before
        ("Pacific/Auckland", 9, "2026-12-06 21:00", "2026-12-06 20:00"),
    ],
)
def test_the_digest_hour_is_the_persons_local_hour_across_daylight_saving(zone, hour, now, due):
    assert digest_due_at(now=at(now), zone=ZoneInfo(zone), hour=hour) == at(due)


def _digest_person(username: str, *, zone: str = "", hour: int = 9) -> User:
    user = User.objects.get(username=username)
    NotificationPreference.objects.create(user=user, mode="digest", digest_hour=hour)
    User.objects.filter(pk=user.pk).update(time_zone=zone)
    return user


@pytest.mark.django_db
def test_a_digest_waits_for_nine_in_the_persons_zone_and_names_it(acme, api):
    _digest_person("bob", zone="Asia/Kolkata")
    with clock.frozen(at("2026-12-07 02:00")):  # 07:30 in Kolkata
        start_expense(api("alice"), 4_500_000, subject="E-ist-1")
        assert mail_digest_send()["sent"] == 0

        clock.advance(dt.timedelta(minutes=89))  # 08:59 IST
        assert mail_digest_send()["sent"] == 0

        clock.advance(dt.timedelta(minutes=1))  # 09:00 IST
        assert mail_digest_send() == {"sent": 1, "failed": 0}

    [digest] = mail.outbox
    assert "As of 7 Dec, 09:00 IST." in digest.body
    assert "Asked 7 Dec, 07:30 IST; due 9 Dec, 07:30 IST" in digest.body
    assert "at 09:00 IST" in digest.body
    assert "UTC" not in digest.body and "UTC" not in digest.alternatives[0].content


@pytest.mark.django_db
def test_what_arrives_after_the_hour_waits_for_the_next_day(acme, api):
    _digest_person("bob", zone="Asia/Kolkata")
    with clock.frozen(at("2026-12-07 04:00")):  # 09:30 IST: today's hour has gone
        start_expense(api("alice"), 4_500_000, subject="E-ist-2")
        assert mail_digest_send()["sent"] == 0
        clock.advance(dt.timedelta(hours=23, minutes=29))  # 08 Dec, 08:59 IST
        assert mail_digest_send()["sent"] == 0
        clock.advance(dt.timedelta(minutes=1))
        assert mail_digest_send()["sent"] == 1
        assert mail_digest_send()["sent"] == 0  # one digest a day
    assert set(MailMessage.objects.values_list("status", flat=True)) == {"sent"}


@pytest.mark.django_db
def test_without_a_zone_of_their_own_the_organisations_zone_and_the_persons_hour(acme, api):
    Tenant.objects.filter(pk=acme.pk).update(time_zone="Europe/London")
    _digest_person("bob", hour=7)
    with clock.frozen(at("2026-12-07 06:00")):
        start_expense(api("alice"), 4_500_000, subject="E-gmt")
    wrote = at("2027-03-27 10:00")  # the day before London's clocks go forward
    MailMessage.objects.update(created_at=wrote)

    with clock.frozen(at("2027-03-28 05:59")):  # 06:59 BST
        assert mail_digest_send()["sent"] == 0
    with clock.frozen(at("2027-03-28 06:00")):  # 07:00 BST, an hour earlier in UTC
        assert mail_digest_send()["sent"] == 1
    [digest] = mail.outbox
    assert "As of 28 Mar, 07:00 BST." in digest.body


@pytest.mark.django_db
def test_the_settings_page_keeps_the_digest_hour_and_refuses_one_off_the_list(acme):
    bob = User.objects.get(username="bob")
    client = Client()
    client.force_login(bob)
    assert 'name="digest_hour"' in client.get("/account/notifications").content.decode()

    for bad in ("24", "-1", "nine", "9.5"):
        refused = client.post(
            "/account/notifications", {"mode": "digest", "digest_hour": bad, "time_zone": ""}
        )
        assert refused.status_code == 400
        assert DIGEST_HOUR_INVALID in refused.content.decode()
        assert not NotificationPreference.objects.filter(user=bob).exists()

    for chosen, kept in (("7", 7), ("0", 0), ("", 9)):  # midnight is an hour; none: 09:00
        saved = client.post(
            "/account/notifications", {"mode": "digest", "digest_hour": chosen, "time_zone": ""}
        )
        assert saved.status_code == 302
        assert NotificationPreference.objects.get(user=bob).digest_hour == kept


@pytest.mark.django_db
def test_a_link_page_shows_when_the_task_is_due_in_the_persons_zone(acme, api, client):
    User.objects.filter(username="bob").update(time_zone="Asia/Kolkata")
    with clock.frozen(at("2026-12-07 02:00")):
        wid = start_expense(api("alice"), 4_500_000, subject="E-link-ist").json()["workflowId"]
    page = client.get(links_for(wid, "bob")["approve"]).content.decode()
    assert "<dt>Due</dt><dd>9 Dec, 07:30 IST</dd>" in page
    assert "UTC" not in page
