"""The search, settings and out-of-office pages in a real headless Chromium, by
keyboard: the search with the API's parameters in its address and a refused range said
in place; a chosen time zone changing the times shown; a colleague named by typing among
20,000."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User

from ..browser import CHROMIUM
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed"),
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
    expect(rows.first).to_contain_text("Rs 45,000.00")
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

    alice.get_by_role("link", name="Settings").click()
    zone = alice.get_by_label("Show times in")
    zone.focus()
    zone.select_option("Asia/Kolkata")
    alice.get_by_role("button", name="Save").press("Enter")
    expect(alice.locator(".flash.success")).to_contain_text("Saved: your settings.")
    expect(alice.get_by_label("Show times in")).to_have_value("Asia/Kolkata")
    expect(alice.locator(".help")).to_contain_text("IST")
    shot(alice, "settings-time-zone")

    alice.goto(f"{live_server.url}/workflows/{wid}")
    expect(alice.locator(".status-sentence")).to_contain_text("IST")
    assert User.objects.get(username="alice").time_zone == "Asia/Kolkata"


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
