"""The inbox's sort, filters and keyboard shortcuts in a real headless Chromium: the
form sorts and filters by query parameters; j/k move the selection, o opens, a approves
behind the same Undo as the button, s needs a reason as the button does, r on a step
with no separate rejection says to press s, ? lists the shortcuts, and typing in a box
types. axe-core on the inbox and My requests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from approvals.models import WorkflowEvent
from approvals.pages.common import REASON_TEXTS, UNDO_SECONDS

from ..a11y import assert_accessible
from .support import expense_started
from .test_browser import shot, sign_in
from .test_inbox_lists import _send_back_and_resubmit

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def _decisions(*wids: str) -> list[tuple[str, str]]:
    events = WorkflowEvent.objects.filter(workflow_id__in=wids, type="DecisionRecorded")
    return [(str(e.workflow_id), e.payload["decision"]) for e in events.order_by("id")]


def _subjects(page: Page) -> list[str]:
    return page.locator("li.task a.subject").all_inner_texts()


def test_the_inbox_sorts_filters_and_answers_the_keyboard(
    acme: Any, live_server: Any, browser: Browser, server_clock: Callable[[float], None]
) -> None:
    base = live_server.url
    small = expense_started("K-small", amount=100_000)
    big = expense_started("K-big", amount=9_000_000)
    mid = expense_started("K-mid", amount=500_000)
    bob = sign_in(browser, base, "bob")
    bob.clock.install()
    bob.reload()
    expect(bob.locator("#inbox-count")).to_contain_text("3 requests wait for you")
    assert_accessible(bob, "the inbox")

    # sort and filter through the form (a plain GET)
    bob.get_by_label("Sort", exact=True).select_option("amount")
    bob.get_by_role("button", name="Show").click()
    expect(bob.locator("li.task a.subject").first).to_have_text("Expense claim K-big")
    assert _subjects(bob) == ["Expense claim K-big", "Expense claim K-mid", "Expense claim K-small"]
    assert "sort=amount" in bob.url
    bob.get_by_label("Search", exact=True).fill("k-mid")
    bob.get_by_role("button", name="Show").click()
    expect(bob.locator("#inbox-count")).to_contain_text("1 request matches")
    assert _subjects(bob) == ["Expense claim K-mid"]
    shot(bob, "inbox-filtered")
    bob.get_by_role("link", name="Clear").click()
    bob.goto(f"{base}/?sort=amount")
    expect(bob.locator("li.task")).to_have_count(3)

    # ? lists the shortcuts in a dialog; Escape closes it
    bob.keyboard.press("?")
    keys = bob.get_by_role("dialog", name="Keyboard shortcuts")
    expect(keys).to_be_visible()
    # s and r name where each leads, as the row's buttons do
    expect(keys).to_contain_text("Send back, to where the row's button says")
    expect(keys).to_contain_text("Reject, where the step has a rejection that ends the request")
    assert_accessible(bob, "the inbox's shortcuts")
    shot(bob, "inbox-shortcuts")
    bob.keyboard.press("Escape")
    expect(keys).not_to_be_visible()

    # j/k move the selection; typing in a box is typing
    rows = {w: bob.locator(f'li[data-workflow="{w}"]') for w in (big, mid, small)}
    bob.keyboard.press("j")
    expect(rows[big]).to_have_attribute("aria-current", "true")
    bob.keyboard.press("j")
    bob.keyboard.press("j")
    bob.keyboard.press("k")
    expect(rows[mid]).to_have_attribute("aria-current", "true")
    expect(rows[big]).not_to_have_attribute("aria-current", "true")
    box = rows[mid].locator("textarea[id^=comment-]")
    box.fill("")
    box.press_sequentially("jar")
    expect(box).to_have_value("jar")
    expect(rows[mid]).to_have_attribute("aria-current", "true")
    box.fill("")

    # this step sends a rejection back: r says to press s, and records nothing
    rows[mid].focus()
    bob.keyboard.press("r")
    expect(bob.locator("#inbox-status")).to_have_text(
        "This step has no separate rejection: press s to send it back."
    )
    assert _decisions(mid) == []

    # s on the selected row asks for the reason, as the button does, and records nothing
    rows[mid].focus()
    bob.keyboard.press("s")
    expect(rows[mid].get_by_role("alert")).to_have_text(REASON_TEXTS["send_back"])
    expect(box).to_be_focused()
    expect(bob.locator("#confirm-decision")).not_to_be_visible()

    # a approves behind the Undo: undone, nothing; again and left, recorded once
    rows[mid].focus()
    bob.keyboard.press("a")
    held = bob.locator(".held")
    expect(held).to_contain_text("Approved Expense claim K-mid")
    shot(bob, "inbox-key-approve")
    held.get_by_role("button", name="Undo").click()
    expect(rows[mid]).to_be_visible()
    bob.clock.run_for((UNDO_SECONDS + 1) * 1000)
    bob.wait_for_timeout(500)
    assert _decisions(mid) == []
    rows[mid].focus()
    bob.keyboard.press("a")
    expect(held).to_contain_text("Approved Expense claim K-mid")
    server_clock(UNDO_SECONDS + 1)  # the server's window passes too
    bob.clock.run_for((UNDO_SECONDS + 1) * 1000)
    expect(bob.locator("#inbox-status")).to_contain_text("Approved Expense claim K-mid")
    assert _decisions(mid) == [(mid, "approve")]

    # o opens the selected request
    bob.keyboard.press("j")
    expect(rows[big]).to_have_attribute("aria-current", "true")
    bob.keyboard.press("o")
    bob.wait_for_url(f"**/workflows/{big}")
    assert _decisions(big, small) == []


def test_my_requests_filters_and_is_accessible(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    expense_started("M-1")
    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/")
    row = alice.locator("table.my-requests tbody tr").first
    expect(row).to_contain_text("Waits on Bob")
    alice.get_by_label("Status").select_option("approved")
    alice.get_by_role("button", name="Show").click()
    expect(alice.locator(".empty")).to_contain_text("None of your requests matches")
    alice.get_by_label("Status").select_option("waiting")
    alice.get_by_role("button", name="Show").click()
    expect(alice.locator("table.my-requests tbody tr")).to_have_count(1)
    shot(alice, "my-requests-filtered")
    assert_accessible(alice, "My requests")

    # the approver sees what a resubmission changed, and the note, behind its mark
    _send_back_and_resubmit("M-2")
    bob = sign_in(browser, base, "bob")
    mark = bob.locator("li.task details.resubmitted")
    mark.locator("summary").click()
    expect(mark).to_contain_text("Department: Engineering")
    expect(mark).to_contain_text("Took the taxi out")
    shot(bob, "inbox-resubmitted")
    assert_accessible(bob, "the inbox with a resubmission")
