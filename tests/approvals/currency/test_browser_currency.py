"""In a real headless Chromium, at 1280 and 390 px wide: alice fills in a 999 USD claim;
the route preview leads with the conversion the rules compare and names the route its
rupees take, with no horizontal overflow; she submits and the request page shows the
amount in dollars and the conversion beside it. A currency with no rate is refused on
the form in words, and nothing starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, Page, expect

from approvals import clock
from approvals.models import ExchangeRate, Workflow

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

SHOTS = Path("/tmp/currency-shots")


def _alice(browser: Browser, base: str, width: int) -> Page:
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()
    page.goto(f"{base}/workflows/new?template=expense-approval")
    return page


def _overflow(page: Page) -> int:
    width: int = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    return width


def _shot(page: Page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_999_usd_claim_previews_its_conversion_and_routes_as_its_rupees(
    acme: Any, live_server: Any, browser: Browser, width: int
) -> None:
    alice = _alice(browser, live_server.url, width)
    preview = alice.locator("#route-preview .route")

    alice.get_by_label("Currency").select_option("USD")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Amount").fill("999")

    # the rate of the start's day in the organisation's zone (selectors/rates.py)
    day = f"{clock.now().astimezone(ZoneInfo(acme.time_zone or 'UTC')):%-d %b %Y}"
    expect(preview).to_contain_text(f"$999.00 ≈ ₹83,117 at 83.20 on {day}: it will go to Bob")
    expect(preview).to_contain_text("Victor too if the amount is above ₹1,00,000.00")
    assert _overflow(alice) <= 0
    _shot(alice, f"start-usd-{width}")

    alice.get_by_label("Reference").fill(f"USD-{width}")
    alice.get_by_role("button", name="Submit").click()
    expect(alice.locator("dl.data")).to_contain_text("$999.00")
    expect(alice.locator("dl.data")).to_contain_text(f"$999.00 ≈ ₹83,117 at 83.20 on {day}")
    assert _overflow(alice) <= 0
    _shot(alice, f"request-usd-{width}")
    assert Workflow.objects.get().public_status == "PENDING_MANAGER"


def test_a_currency_without_a_rate_is_refused_on_the_form(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    ExchangeRate.objects.filter(currency="EUR").delete()
    alice = _alice(browser, live_server.url, 390)

    alice.get_by_label("Currency").select_option("EUR")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Amount").fill("999")
    expect(alice.locator("#route-preview .route")).to_contain_text(
        "There is no exchange rate from EUR to INR"
    )
    alice.get_by_label("Reference").fill("EUR-1")
    alice.get_by_role("button", name="Submit").click()

    expect(alice.get_by_text("There is no exchange rate from EUR to INR").first).to_be_visible()
    assert _overflow(alice) <= 0
    _shot(alice, "start-eur-refused-390")
    assert not Workflow.objects.exists()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_finance_admin_sees_a_bad_rates_file_refused_in_words(
    acme: Any, live_server: Any, browser: Browser, width: int, tmp_path: Path
) -> None:
    bad = tmp_path / "rates.csv"
    bad.write_text("currency,date,rate\nUSD,2030-01-02,83.5\nEUR,tomorrow,90\n")
    before = ExchangeRate.objects.count()
    fiona = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    fiona.goto(f"{live_server.url}/admin/login/")
    fiona.get_by_label("Username").fill("fiona")
    fiona.get_by_label("Password").fill("demo")
    fiona.get_by_role("button", name="Log in").click()

    fiona.goto(f"{live_server.url}/admin/approvals/exchangerate/")
    expect(fiona.get_by_text("Rules compare amounts in INR")).to_be_visible()
    _shot(fiona, f"admin-rates-{width}")
    fiona.get_by_role("link", name="Import rates from a CSV file").click()
    fiona.get_by_label("CSV file").set_input_files(str(bad))
    fiona.get_by_role("button", name="Import the rates").click()

    expect(fiona.locator(".errornote")).to_contain_text(
        "Nothing was imported. Correct these lines and import the file again: "
        "Line 3: 'tomorrow' is not a date written as 2026-12-06."
    )
    assert _overflow(fiona) <= 0
    _shot(fiona, f"admin-rates-import-refused-{width}")
    assert ExchangeRate.objects.count() == before
