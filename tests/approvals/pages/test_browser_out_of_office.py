"""Out of office in a real headless Chromium: the page lists a current and a planned
absence with their actions, the banner shows on every page while one is on, and its
"End it now" ends it."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals import clock
from approvals.models import Delegation, User
from approvals.pages.absence import ABSENCE_ENDED, ABSENCE_SET_UP_BY

from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

DAY = dt.timedelta(days=1)


def test_the_page_lists_a_current_and_a_planned_absence_and_the_banner_ends_one(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    bob, ivan, victor = (User.objects.get(username=u) for u in ("bob", "ivan", "victor"))
    now = clock.now()
    current = Delegation.objects.create(
        tenant=acme, user=bob, delegate=ivan, starts_at=now - DAY, ends_at=now + 3 * DAY
    )
    Delegation.objects.create(
        tenant=acme,
        user=bob,
        delegate=victor,
        starts_at=now + 20 * DAY,
        ends_at=now + 25 * DAY,
        reason="Family visit",
    )

    page = sign_in(browser, live_server.url, "bob")
    banner = page.locator("form.absence")
    expect(banner).to_contain_text("You are out of office until")
    expect(banner).to_contain_text(f"{ivan.first_name or 'ivan'} decides for you")

    page.get_by_role("link", name="Out of office").click()
    rows = page.locator("table.absences tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.first.get_by_role("button", name="End now")).to_be_visible()
    expect(rows.first.get_by_role("button", name="Delete")).to_have_count(0)
    expect(rows.nth(1).get_by_role("button", name="Delete")).to_be_visible()
    expect(rows.nth(1)).to_contain_text("Family visit")
    expect(rows.nth(1).get_by_role("link", name="Change")).to_be_visible()
    shot(page, "out-of-office-current-and-planned")

    banner.get_by_role("button", name="End it now").click()
    expect(page.locator(".flash.success")).to_contain_text(ABSENCE_ENDED)
    expect(page.locator("form.absence")).to_have_count(0)
    current.refresh_from_db()
    assert current.ends_at <= clock.now()


def test_an_absence_an_admin_set_up_names_the_admin_to_the_person_away(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    victor, farah, fiona = (User.objects.get(username=u) for u in ("victor", "farah", "fiona"))
    now = clock.now()
    Delegation.objects.create(
        tenant=acme,
        user=victor,
        delegate=farah,
        starts_at=now + 2 * DAY,
        ends_at=now + 6 * DAY,
        reason="Conference",
        created_by=fiona,
    )

    page = sign_in(browser, live_server.url, "victor")
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{live_server.url}/account/out-of-office")
        row = page.locator("table.absences tbody tr")
        expect(row).to_have_count(1)
        expect(row).to_contain_text(
            ABSENCE_SET_UP_BY.format(name=fiona.get_full_name() or fiona.username)
        )
        shot(page, f"out-of-office-set-up-by-an-admin-{width}")
