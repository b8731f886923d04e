"""Dates of another year carry it, in the reader's time zone: an archived request from
more than a year ago shows ``3 Mar 2025, 14:05 IST`` on its page and in the lists, on
PostgreSQL and in a real headless Chromium at 1280 and 390 px; this year's dates stay
``3 Mar, 14:05``."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.test import Client
from playwright.sync_api import Browser, expect

from approvals import clock
from approvals.audit.archive import month_archive
from approvals.models import Tenant, User, Workflow
from approvals.words import zones
from tests.approvals.audit.test_archive import archive_root  # noqa: F401
from tests.approvals.audit.test_archived_in_place import _archived_now

from ..pages.test_browser import SHOTS, sign_in

IST = ZoneInfo("Asia/Kolkata")


def _shown(at: dt.datetime) -> str:
    """What a reader in India is shown of ``at``, worked out here, not by the app."""
    local = at.astimezone(IST)
    return f"{local.day} {local:%b} {local.year}, {local:%H:%M} IST"


def test_the_year_is_shown_for_another_year_in_the_readers_zone() -> None:
    new_year_utc = dt.datetime(2025, 12, 31, 20, 0, tzinfo=dt.UTC)  # 1 Jan 2026 in India
    with clock.frozen(dt.datetime(2026, 6, 1, 9, 0, tzinfo=dt.UTC)):
        assert zones.moment(new_year_utc, IST) == "1 Jan, 01:30 IST"
        assert zones.moment(new_year_utc, dt.UTC) == "31 Dec 2025, 20:00 UTC"
        assert zones.moment(dt.datetime(2026, 3, 3, 14, 5, tzinfo=dt.UTC), dt.UTC) == (
            "3 Mar, 14:05 UTC"
        )
        assert zones.moment(dt.datetime(2027, 1, 2, 8, 0, tzinfo=dt.UTC), dt.UTC) == (
            "2 Jan 2027, 08:00 UTC"
        )
        assert zones.day_month(dt.date(2024, 2, 29)) == "29 Feb 2024"


def _archived_request(acme: Tenant) -> Workflow:
    month, workflows = _archived_now(acme)
    assert month_archive(month).dropped
    User.objects.filter(username__in=["alice", "bob"]).update(time_zone="Asia/Kolkata")
    return Workflow.objects.get(pk=workflows[0].pk)


@pytest.mark.django_db
def test_an_archived_request_shows_its_year_on_its_page_and_in_the_lists(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
) -> None:
    wf = _archived_request(acme)
    assert clock.now() - wf.created_at > dt.timedelta(days=365)
    started = _shown(wf.created_at)
    web = Client()
    web.force_login(User.objects.get(username="alice"))
    page = web.get(f"/workflows/{wf.pk}").content.decode()
    assert 'id="archived"' in page
    assert started in page
    # no date on it lacks its year: every "3 Mar, 14:05" names one
    assert not re.search(r"\b\d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2}", page)
    for url in ("/workflows/", "/search?subject=R-1"):
        listed = web.get(url).content.decode()
        assert "R-1" in listed, url
        assert str(wf.created_at.astimezone(IST).year) in listed, url
        assert not re.search(r"\b\d{1,2} [A-Z][a-z]{2}, \d{2}:\d{2}", listed), url


@pytest.mark.django_db(transaction=True)
@pytest.mark.browser
def test_an_archived_requests_year_in_a_browser(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    live_server: Any,
    browser: Browser,
) -> None:
    wf = _archived_request(acme)
    started = _shown(wf.created_at)
    page = sign_in(browser, live_server.url, "alice")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/workflows/{wf.pk}")
        expect(page.get_by_text(started).first).to_be_visible()
        page.screenshot(path=str(SHOTS / f"archived-year-page-{width}.png"), full_page=True)
        page.goto(f"{live_server.url}/workflows/")
        expect(page.get_by_text(str(wf.created_at.astimezone(IST).year)).first).to_be_visible()
        page.screenshot(path=str(SHOTS / f"archived-year-list-{width}.png"), full_page=True)
        overflow = page.evaluate(
            "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - window.innerWidth"
        )
        assert overflow <= 0, width
