"""The analytics page in a real headless Chromium: the finance admin reaches it from
the navigation, filters by department, and the page passes axe-core (WCAG 2.1 A/AA)
with its SVG charts and their tables."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from ..a11y import assert_accessible
from ..pages.test_browser import shot, sign_in
from .support import act, later, travel_published, travel_started

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_the_finance_admin_reads_how_the_process_performs(
    acme: Any,
    live_server: Any,
    browser: Browser,  # noqa: F811
) -> None:
    # given: a few requests that waited at their steps
    travel_published(acme)
    for department, hours in (("SALES", 3), ("IT_OPS", 30), ("SALES", 8)):
        wid = travel_started(department=department)
        later(hours)
        act(wid, "approve")
    act(travel_started(department="IT_OPS"), "reject")

    # when: fiona opens Analytics from the navigation
    page = sign_in(browser, live_server.url, "fiona")
    page.get_by_role("navigation").get_by_role("link", name="Analytics").click()

    # then: charts with their tables, in words
    expect(page.get_by_role("heading", name="How the process performs")).to_be_visible()
    expect(page.get_by_role("img", name="Requests started each week")).to_be_visible()
    steps = page.get_by_role("table", name="Each step")
    # the 90th percentile, 23 hours 24 minutes, within the rollup's 5%
    expect(steps.get_by_role("row", name="Travel request Team lead")).to_contain_text(
        re.compile(r"2[23] hours \d+ minutes")
    )
    expect(page.get_by_text("rounded to within 5%")).to_be_visible()
    expect(page.get_by_role("link", name="Download these numbers (CSV)").first).to_be_visible()
    assert_accessible(page, "the analytics page")
    shot(page, "analytics")

    # and: only Sales
    page.get_by_label("Kind of request").select_option(label="Travel request")
    page.get_by_label("Only where").select_option(label="Department is Sales")
    page.get_by_role("button", name="Show").click()
    expect(steps.get_by_role("row", name="Travel request Team lead")).to_contain_text(
        re.compile(r"7 hours \d+ minutes")  # 7 hours 30 minutes within 5%
    )
    expect(page.get_by_role("table", name="Each step")).not_to_contain_text(
        "Changes by the submitter"
    )

    # and: a period that ends before it starts is told, not shown
    page.get_by_label("From", exact=True).fill("2026-11-30")
    page.get_by_label("To", exact=True).fill("2026-11-01")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("alert")).to_contain_text("The period ends before it starts")
    assert_accessible(page, "the analytics page with a bad period")
