"""The search, settings and out-of-office pages in a real headless Chromium, by
keyboard: the search with the API's parameters in its address and a refused range said
in place; a chosen time zone changing the times shown; a colleague named by typing among
20,000."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User

from ..a11y import assert_accessible
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_searching_by_keyboard_with_the_apis_parameters(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    trip = expense_started("TRIP-1")
    expense_started("TAXI-3", who="victor")  # not alice's: she may not see it
    alice = sign_in(browser, live_server.url, "alice")

    alice.get_by_role("link", name="Search").click()
    alice.get_by_label("Words").fill("trip")
    alice.get_by_label("Status").select_option(label="Waiting: Manager")
    alice.get_by_label("Submitted from").fill("2020-01-01")
    alice.get_by_label("Words").press("Enter")

    rows = alice.locator("table.tasks tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-workflow", trip)
    expect(rows.first).to_contain_text("₹45,000.00")
    query = parse_qs(urlparse(alice.url).query)
    assert query["text"] == ["trip"] and query["status"] == ["PENDING_MANAGER"]
    shot(alice, "search-results")

    alice.get_by_label("Submitted before").fill("2019-12-31")
    alice.get_by_role("button", name="Search").click()
    expect(alice.get_by_role("alert")).to_contain_text("must be later than submitted from")
    expect(rows).to_have_count(0)
    alice.set_viewport_size({"width": 380, "height": 900})
    shot(alice, "search-refused-narrow")


def test_choosing_a_time_zone_by_keyboard_changes_the_times_shown(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    wid = expense_started("TZ-1")
    alice = sign_in(browser, live_server.url, "alice")
    alice.goto(f"{live_server.url}/workflows/{wid}")
    # before she chooses, pages follow her browser's zone: the one she chooses must show
    expect(alice.locator(".status-sentence")).not_to_contain_text("JST")

    alice.get_by_role("link", name="Settings").click()
    zone = alice.get_by_label("Show times in")
    zone.focus()
    zone.select_option("Asia/Tokyo")
    alice.get_by_role("button", name="Save").press("Enter")
    expect(alice.locator(".flash.success")).to_contain_text("Saved: your settings.")
    expect(alice.get_by_label("Show times in")).to_have_value("Asia/Tokyo")
    expect(alice.locator("#id_time_zone_helptext")).to_contain_text("JST")
    shot(alice, "settings-time-zone")

    alice.goto(f"{live_server.url}/workflows/{wid}")
    expect(alice.locator(".status-sentence")).to_contain_text("JST")
    assert User.objects.get(username="alice").time_zone == "Asia/Tokyo"


def test_out_of_office_names_a_colleague_by_typing_among_20000(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    from approvals.models import Delegation

    User.objects.bulk_create(
        [User(username=f"ivy-{i:05d}", first_name="Ivy", tenant=acme) for i in range(20_000)],
        batch_size=5000,
    )
    User.objects.filter(username="ivan").update(first_name="Ivan", last_name="Iyer")
    bob = sign_in(browser, live_server.url, "bob")

    bob.get_by_role("link", name="Out of office").click()
    field = bob.get_by_label("Who decides for you")
    field.focus()
    field.press_sequentially("ivan i", delay=30)
    # the suggestions: one colleague, by name, from /people
    option = bob.locator('#people-list option[value="ivan"]')
    expect(option).to_have_count(1)
    expect(option).to_have_attribute("label", "Ivan Iyer (ivan)")
    expect(bob.locator("#people-list option")).to_have_count(1)
    field.fill("ivan")
    bob.get_by_label("First day away").fill("2026-12-01")
    bob.get_by_label("Last day away").fill("2026-12-05")
    bob.get_by_label("Last day away").press("Enter")
    expect(bob.locator(".flash.success")).to_contain_text("Ivan decides your tasks")
    assert Delegation.objects.get(user__username="bob").delegate.username == "ivan"
    field = bob.get_by_label("Who decides for you")
    field.press_sequentially("iv", delay=30)
    expect(bob.locator("#people-list option")).to_have_count(10)
    shot(bob, "out-of-office-people")


def test_search_finds_hotel_in_a_description_pages_and_exports(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    from approvals.services.workflows import workflow_start

    alice_user = User.objects.get(username="alice")

    def claim(subject: str, description: str, amount: int) -> str:
        data = {"amountPaise": amount, "currency": "INR", "department": "eng"}
        started = workflow_start(
            submitter=alice_user,
            template_key="expense-approval",
            subject_type="expense",
            subject_id=subject,
            data={**data, "description": description},
        )
        return str(started.workflow_id)

    hotel = claim("TRIP-9", "Hotel in Pune for the offsite", 2_500_000)
    claim("CAB-2", "Taxi to the airport", 3_000_000)
    claim("BIG-1", "Hotel block for the sales kickoff", 9_000_000)
    alice = sign_in(browser, live_server.url, "alice")

    alice.get_by_role("link", name="Search").click()
    alice.get_by_label("Words").fill("hotel")
    alice.get_by_label("Amount from").fill("₹10,000")
    alice.get_by_label("Amount up to").fill("50,000")
    alice.get_by_label("Sort by").select_option(label="Largest amount first")
    alice.get_by_label("Words").press("Enter")

    rows = alice.locator("table.tasks tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-workflow", hotel)
    expect(rows.first).to_contain_text("Hotel in Pune for the offsite")
    query = parse_qs(urlparse(alice.url).query)
    assert query["amountMin"] == ["₹10,000"] and query["sort"] == ["amount"]
    assert_accessible(alice, "the search page with results")
    shot(alice, "search-hotel")

    with alice.expect_download() as download:
        alice.get_by_role("link", name="Download all results (CSV)").click()
    lines = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("Reference,Summary,Amount,Status")
    assert len(lines) == 2 and lines[1].startswith("TRIP-9,")

    alice.get_by_label("Amount up to").fill("abc")
    alice.get_by_role("button", name="Search").click()
    expect(alice.get_by_role("alert")).to_contain_text("Enter an amount such as")
    expect(rows).to_have_count(0)
    assert_accessible(alice, "the search page with a refused amount")
    shot(alice, "search-amount-refused")
