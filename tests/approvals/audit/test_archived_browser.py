"""alice, in a real headless Chromium at 1280 and 390 px, opens a request whose month
is archived: the page says so in words, tells its history as it did while live, offers
no comment and no file, and nothing runs past the screen's edge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.audit.archive import month_archive
from approvals.audit.retention import retention_set
from approvals.models import Tenant

from ..pages.test_browser import shot
from .test_archive import _old_month, archive_root  # noqa: F401

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_an_archived_request_reads_as_it_did_and_says_it_is_archived(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    live_server: Any,
    browser: Browser,
) -> None:
    retention_set(tenant=acme, years=1, by="olga")
    month, workflows = _old_month()
    wid = workflows[0].pk
    widths = (1280, 390)
    live: dict[int, str] = {}
    pages = {}
    for width in widths:
        page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill("demo")
        page.get_by_role("button", name="Sign in").click()
        page.goto(f"{live_server.url}/workflows/{wid}")
        live[width] = page.locator("ol").first.inner_text()
        pages[width] = page

    month_archive(month)

    for width in widths:
        page = pages[width]
        page.goto(f"{live_server.url}/workflows/{wid}")
        notice = page.locator("#archived")
        expect(notice).to_contain_text("Archived on ")
        expect(notice).to_contain_text("read from the archive")
        assert page.locator("ol").first.inner_text() == live[width]
        assert "Bob approved the Manager step" in live[width]
        expect(page.locator("form.comment-form")).to_have_count(0)
        past = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert past <= 0, f"{past}px past the edge at {width}px"
        shot(page, f"archived-request-{width}")
