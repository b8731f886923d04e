"""The error pages in a real headless Chromium: a missing page is styled, keeps the
navigation and leads back to the inbox; the auditor's New request is a styled refusal."""

from __future__ import annotations

import os
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.access import FORBIDDEN_AUDITOR

from .test_browser import sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

SHOTS = os.environ.get("APPROVALS_SHOTS", "")


def test_a_missing_page_leads_back_to_the_inbox(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    page = sign_in(browser, live_server.url, "alice")

    response = page.goto(f"{live_server.url}/no/such/page")

    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="We could not find that page")).to_be_visible()
    expect(page.get_by_role("navigation").get_by_role("link", name="My requests")).to_be_visible()
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "404.png"), full_page=True)
    page.get_by_role("link", name="Go to your inbox").click()
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()


def test_the_auditor_sees_no_new_request_and_is_refused_it_in_words(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    page = sign_in(browser, live_server.url, "audrey")
    nav = page.get_by_role("navigation")
    expect(nav.get_by_role("link", name="Verify")).to_be_visible()
    expect(nav.get_by_role("link", name="New request")).to_have_count(0)

    response = page.goto(f"{live_server.url}/workflows/new")

    assert response is not None and response.status == 403
    expect(page.get_by_text(FORBIDDEN_AUDITOR)).to_be_visible()
    if SHOTS:
        page.screenshot(path=os.path.join(SHOTS, "403.png"), full_page=True)
