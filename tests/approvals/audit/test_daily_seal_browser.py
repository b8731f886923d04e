"""audrey, in a real headless Chromium, verifies one request: the page says, in words,
that it is in her organisation's daily seal of yesterday and where; then she verifies
the whole organisation and the page says how many days were checked."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals import clock
from approvals.audit.daily_seal import daily_seals_due
from approvals.audit.offline_verify import day_words
from approvals.audit.seal import seal_all
from approvals.models import Tenant, Workflow

from ..a11y import assert_accessible
from ..pages.test_browser import shot, sign_in
from .support import clear_of_midnight, run_expenses

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


@pytest.fixture(autouse=True)
def _clear_of_midnight() -> Iterator[None]:
    with clear_of_midnight():
        yield


def test_audrey_sees_a_request_in_its_daily_seal(
    acme: Tenant, api: Any, live_server: Any, browser: Browser
) -> None:
    # given: three requests two days ago, sealed by the job since
    noon = dt.datetime.combine(
        (clock.now() - dt.timedelta(days=2)).date(), dt.time(12), tzinfo=dt.UTC
    )
    with clock.shifted(noon - clock.now()):
        ids = run_expenses(api, 3)
    seal_all()
    assert len(daily_seals_due()) == 2
    wf = Workflow.objects.get(pk=ids[1])
    yesterday = day_words((clock.now() - dt.timedelta(days=1)).date())
    page = sign_in(browser, live_server.url, "audrey")

    # when: one request
    page.get_by_role("link", name="Verify", exact=True).click()
    page.get_by_label("One request").check()
    page.get_by_label("Request", exact=True).fill(str(wf.pk))
    page.get_by_role("button", name="Verify").click()

    # then
    expect(page.locator("#verdict")).to_contain_text("All 1 request verify")
    daily = page.locator(".daily-seal")
    expect(daily).to_contain_text(f"Daily seals: in the daily seal of acme for {yesterday}")
    expect(daily).to_contain_text("of 3")
    expect(daily).to_contain_text("leads to the signed root")
    shot(page, "audit-verify-daily-seal")
    assert_accessible(page, "the Verify page with a daily seal")

    # and the whole organisation: the days' signatures and chain, the last day's root
    page.get_by_label("Every request of the organisation").check()
    page.get_by_role("button", name="Verify").click()
    expect(page.locator(".daily-seal")).to_have_text(
        "Daily seals: 2 daily seal(s) checked (signatures and the chain of days) and the last "
        "day's root recomputed from the history."
    )
