"""Every page an employee reaches, in a real headless Chromium, passes axe-core (WCAG 2.1
A and AA) with no violation; the skip link is the first stop of the keyboard and leads
to the content; and a failed submit lists what is wrong at the top and moves the focus to
the first field at fault."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from ..a11y import assert_accessible
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

EMPLOYEE_PAGES = {
    "the inbox": "/",
    "my requests": "/workflows/",
    "the new-request form": "/workflows/new?template=expense-approval",
    "search with results": "/search?q=hotel",
    "out of office": "/account/out-of-office",
    "mail settings": "/account/notifications",
    "a missing page": "/no-such-page",
}


def _check(page: Page, base: str, path: str, what: str) -> None:
    page.goto(base + path)
    assert_accessible(page, what)


def test_every_employee_page_passes_axe(acme: Any, live_server: Any, browser: Browser) -> None:  # noqa: F811
    wid = expense_started("R-1", amount=1_25_00_000)
    base = live_server.url
    bob = sign_in(browser, base, "bob")
    for what, path in {**EMPLOYEE_PAGES, "the request page": f"/workflows/{wid}"}.items():
        _check(bob, base, path, f"{what} ({path}), as bob")
    alice = sign_in(browser, base, "alice")
    _check(alice, base, f"/workflows/{wid}", "the request page, as its submitter")
    _check(alice, base, "/workflows/", "my requests, as a submitter")
    auditor = sign_in(browser, base, "audrey")
    _check(auditor, base, "/workflows/new", "the refusal an auditor gets for New request")
    signed_out = browser.new_context().new_page()
    _check(signed_out, base, "/accounts/login/", "the sign-in page")


AUDITOR_PAGES = {
    "verify": "/audit/verify?scope=organisation",
    "export": "/audit/export",
    "search": "/search?q=hotel",
    "settings": "/account/notifications",
}


def test_no_page_a_role_reaches_runs_past_a_phones_edge(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    wid = expense_started("R-390", amount=1_25_00_000)
    base = live_server.url
    reached = {
        "bob": {**EMPLOYEE_PAGES, "the request page": f"/workflows/{wid}"},
        "audrey": {**AUDITOR_PAGES, "the request page": f"/workflows/{wid}"},
    }
    wide: dict[str, int] = {}
    for username, pages in reached.items():
        page = sign_in(browser, base, username) if username != "audrey" else None
        if page is None:
            page = browser.new_context().new_page()
            page.goto(f"{base}/accounts/login/")
            page.get_by_label("Username").fill(username)
            page.get_by_label("Password").fill("demo")
            page.get_by_role("button", name="Sign in").click()
        page.set_viewport_size({"width": 390, "height": 844})
        for what, path in pages.items():
            page.goto(base + path)
            past = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            if past > 0:
                wide[f"{what} ({path}) as {username}"] = past
        assert_accessible(page, f"the request page at 390 px, as {username}")
    assert not wide, f"pages wider than 390 px (by px): {wide}"


def test_the_skip_link_is_the_first_tab_stop_and_leads_to_the_content(
    acme: Any,
    live_server: Any,
    browser: Browser,  # noqa: F811
) -> None:
    bob = sign_in(browser, live_server.url, "bob")
    bob.keyboard.press("Tab")
    skip = bob.get_by_role("link", name="Skip to the content")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()  # shown while it has the focus
    skip.press("Enter")
    expect(bob.locator("main#main")).to_be_focused()


def test_a_failed_submit_lists_the_problems_and_focuses_the_first_field(
    acme: Any,
    live_server: Any,
    browser: Browser,  # noqa: F811
) -> None:
    alice = sign_in(browser, live_server.url, "alice")
    alice.goto(live_server.url + "/workflows/new?template=expense-approval")
    alice.get_by_role("button", name="Submit").click()

    summary = alice.locator("#error-summary")
    expect(summary).to_be_visible()
    expect(summary.get_by_role("heading")).to_have_text("There is a problem")
    links = summary.get_by_role("link")
    assert links.count() >= 1
    first_field = alice.locator(".field.invalid").first.locator("input, select, textarea").first
    expect(first_field).to_be_focused()
    expect(first_field).to_have_attribute("aria-invalid", "true")
    described = first_field.get_attribute("aria-describedby") or ""
    error_id = f"{first_field.get_attribute('id')}_error"
    assert error_id in described.split()  # the field's own error is read with it
    expect(alice.locator(f"#{error_id}")).to_be_visible()
    assert alice.evaluate("document.activeElement.id") == first_field.get_attribute("id")
    assert_accessible(alice, "the new-request form after a failed submit")
    shot(alice, "new-request-error-summary")

    # a link in the summary takes the focus to its field
    links.first.click()
    target = (links.first.get_attribute("href") or "#").lstrip("#")
    expect(alice.locator(f"#{target}")).to_be_focused()
