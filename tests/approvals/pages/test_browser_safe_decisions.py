"""Safe decisions in a real headless Chromium: Enter in a comment never decides; a
rejection without a reason is refused; a rejection asks first, naming the request; an
inbox decision waits behind an Undo (undone, nothing is recorded; left alone, or the
page left, it is recorded once); and approving selected rows says how many and how much
first. The browser's clock is Playwright's, so the wait is moved on, not slept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from approvals.models import HeldDecision, WorkflowEvent
from approvals.pages.common import REASON_TEXTS, UNDO_SECONDS
from approvals.services.held_decisions import held_release_due as release_held_decisions

from .support import at_finance, expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

PAST_THE_WINDOW = (UNDO_SECONDS + 1) * 1000


def _decisions(*wids: str) -> list[tuple[str, str]]:
    events = WorkflowEvent.objects.filter(workflow_id__in=wids, type="DecisionRecorded")
    return [(str(e.workflow_id), e.payload["decision"]) for e in events.order_by("id")]


def _settled(page: Page) -> None:
    """Long enough for a post the page might have sent to be recorded."""
    page.wait_for_timeout(700)


def _inbox(browser: Browser, base: str, who: str = "bob") -> Page:
    page = sign_in(browser, base, who)
    page.clock.install()
    page.reload()
    return page


def test_enter_in_a_comment_does_not_decide(acme: Any, live_server: Any, browser: Browser) -> None:
    base = live_server.url
    wid = expense_started("E-enter")
    bob = _inbox(browser, base)
    box = bob.locator(f'li[data-workflow="{wid}"] textarea[id^="comment-"]')

    box.fill("Looks right")
    box.press("Enter")
    bob.clock.run_for(PAST_THE_WINDOW)
    _settled(bob)

    assert _decisions(wid) == []
    expect(box).to_have_value("Looks right\n")
    expect(bob.locator(".held")).to_have_count(0)

    # the workflow page, and both pages without JavaScript
    bob.goto(f"{base}/workflows/{wid}")
    bob.locator("#decision-comment").press("Enter")
    _settled(bob)
    plain = browser.new_context(java_script_enabled=False).new_page()
    plain.goto(f"{base}/accounts/login/")
    plain.get_by_label("Username").fill("bob")
    plain.get_by_label("Password").fill("demo")
    plain.get_by_role("button", name="Sign in").click()
    plain.locator(f'li[data-workflow="{wid}"] textarea[id^="comment-"]').press("Enter")
    plain.goto(f"{base}/workflows/{wid}")
    plain.locator("#decision-comment").press("Enter")
    _settled(plain)
    assert _decisions(wid) == []
    expect(plain.get_by_role("button", name="Approve")).to_be_visible()


def test_a_rejection_without_a_reason_is_refused(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = at_finance("E-noreason")
    fiona = _inbox(browser, base, "fiona")
    row = fiona.locator(f'li[data-workflow="{wid}"]')

    row.get_by_role("button", name="Reject (ends the request)").click()

    expect(row.get_by_role("alert")).to_have_text(REASON_TEXTS["reject"])
    expect(row.locator('textarea[id^="comment-"]')).to_be_focused()
    expect(row.locator('textarea[id^="comment-"]')).to_have_attribute("aria-invalid", "true")
    expect(fiona.locator("#confirm-decision")).not_to_be_visible()
    shot(fiona, "inbox-reason-needed")
    row.get_by_role("button", name="Send back to the Manager step").click()
    expect(row.get_by_role("alert")).to_have_text(REASON_TEXTS["send_back"])
    fiona.clock.run_for(PAST_THE_WINDOW)
    _settled(fiona)
    assert _decisions(wid) == [(wid, "approve")]

    # the workflow page refuses the same way, and so does the server without the script
    fiona.goto(f"{base}/workflows/{wid}")
    fiona.get_by_role("button", name="Reject (ends the request)").click()
    expect(fiona.get_by_role("alert")).to_have_text(REASON_TEXTS["reject"])
    plain = browser.new_context(java_script_enabled=False).new_page()
    plain.goto(f"{base}/accounts/login/?next=/workflows/{wid}")
    plain.get_by_label("Username").fill("fiona")
    plain.get_by_label("Password").fill("demo")
    plain.get_by_role("button", name="Sign in").click()
    plain.get_by_role("button", name="Reject (ends the request)").click()
    expect(plain.locator(".flash.error")).to_have_text(REASON_TEXTS["reject"])
    assert _decisions(wid) == [(wid, "approve")]


@pytest.mark.usefixtures("undo_window_closed")
def test_reject_asks_first_naming_the_request_and_what_it_does(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = at_finance("R-8")
    fiona = _inbox(browser, base, "fiona")
    row = fiona.locator(f'li[data-workflow="{wid}"]')
    row.locator('textarea[id^="comment-"]').fill("No receipt attached")
    dialog = fiona.locator("#confirm-decision")

    row.get_by_role("button", name="Reject (ends the request)").click()

    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(
        "Reject Expense claim R-8 from Alice, ₹45,000.00? This ends the request."
    )
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()  # the safe choice
    shot(fiona, "inbox-confirm-reject")
    dialog.get_by_role("button", name="Keep it").click()
    expect(dialog).not_to_be_visible()
    expect(row).to_be_visible()
    row.get_by_role("button", name="Reject (ends the request)").click()
    dialog.get_by_role("button", name="Reject (ends the request)").click()
    expect(fiona.locator(".held")).to_contain_text("Rejected Expense claim R-8; the request ends")
    fiona.clock.run_for(PAST_THE_WINDOW)
    expect(fiona.locator("#inbox-status")).to_contain_text(
        "Rejected Expense claim R-8; the request ends."
    )
    assert _decisions(wid) == [(wid, "approve"), (wid, "reject")]

    # the workflow page asks the same; without the script, a page asks
    other = at_finance("R-9")
    fiona.goto(f"{base}/workflows/{other}")
    fiona.locator("#decision-comment").fill("Duplicate of R-8")
    fiona.get_by_role("button", name="Reject (ends the request)").click()
    expect(dialog).to_contain_text("Reject Expense claim R-9 from Alice, ₹45,000.00?")
    shot(fiona, "workflow-confirm-reject")
    dialog.get_by_role("button", name="Reject (ends the request)").click()
    expect(fiona.locator(".status")).to_have_attribute("data-status", "REJECTED")
    assert _decisions(other) == [(other, "approve"), (other, "reject")]

    third = at_finance("R-10")
    plain = browser.new_context(java_script_enabled=False).new_page()
    plain.goto(f"{base}/accounts/login/?next=/workflows/{third}")
    plain.get_by_label("Username").fill("fiona")
    plain.get_by_label("Password").fill("demo")
    plain.get_by_role("button", name="Sign in").click()
    plain.locator("#decision-comment").fill("Wrong department")
    plain.get_by_role("button", name="Reject (ends the request)").click()
    expect(plain.get_by_role("heading", level=1)).to_have_text(
        "Reject Expense claim R-10 from Alice, ₹45,000.00? This ends the request."
    )
    expect(plain.get_by_label("Reason")).to_have_value("Wrong department")
    shot(plain, "confirm-reject-page")
    assert _decisions(third) == [(third, "approve")]
    plain.get_by_role("button", name="Reject (ends the request)").click()
    expect(plain.locator(".held")).to_contain_text("Rejected Expense claim R-10")
    assert release_held_decisions() == 1  # held by the server, without the script too
    assert _decisions(third) == [(third, "approve"), (third, "reject")]


@pytest.mark.usefixtures("undo_window_closed")
def test_a_rejection_that_goes_back_reads_as_a_send_back_everywhere(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = expense_started("R-11")
    bob = _inbox(browser, base)
    row = bob.locator(f'li[data-workflow="{wid}"]')
    row.locator('textarea[id^="comment-"]').fill("Attach the receipt")

    expect(row.get_by_role("button", name="Reject", exact=True)).to_have_count(0)
    row.get_by_role("button", name="Send back to Alice").click()

    expect(bob.locator("#confirm-decision")).not_to_be_visible()  # Alice can resubmit
    expect(bob.locator(".held")).to_contain_text("Sent Expense claim R-11 back to Alice")
    expect(
        bob.get_by_role("button", name="Undo: Sent Expense claim R-11 back to Alice")
    ).to_be_visible()
    bob.clock.run_for(PAST_THE_WINDOW)
    expect(bob.locator("#inbox-status")).to_contain_text("Sent Expense claim R-11 back to Alice.")
    bob.goto(f"{base}/workflows/{wid}")
    expect(bob.locator(".timeline")).to_contain_text(
        "Bob sent the request back to Alice from the Manager step"
    )
    expect(bob.locator(".timeline")).not_to_contain_text("rejected")


def test_undo_within_the_window_records_nothing_and_after_it_records_once(
    acme: Any, live_server: Any, browser: Browser, server_clock: Callable[[float], None]
) -> None:
    base = live_server.url
    wid = expense_started("E-undo")
    left = expense_started("E-left")
    bob = _inbox(browser, base)
    row = bob.locator(f'li[data-workflow="{wid}"]')

    # approved, then undone inside the window: the server holds it, and records nothing
    row.get_by_role("button", name="Approve").click()
    held = bob.locator(".held")
    expect(held).to_contain_text("Approved Expense claim E-undo")
    expect(row).to_be_hidden()
    assert HeldDecision.objects.filter(workflow_id=wid).count() == 1
    shot(bob, "inbox-undo")
    bob.clock.run_for(UNDO_SECONDS * 1000 - 2000)
    held.get_by_role("button", name="Undo").click()
    expect(row).to_be_visible()
    expect(bob.locator("#inbox-status")).to_contain_text("Undone: nothing was recorded")
    server_clock(UNDO_SECONDS + 1)
    bob.clock.run_for(PAST_THE_WINDOW)
    release_held_decisions()
    _settled(bob)
    assert _decisions(wid) == []

    # approved and left alone: recorded once when the window closes
    row.get_by_role("button", name="Approve").click()
    expect(held).to_contain_text("Approved Expense claim E-undo")
    bob.clock.run_for(UNDO_SECONDS * 1000 - 1000)
    _settled(bob)
    assert _decisions(wid) == []
    server_clock(UNDO_SECONDS + 1)
    bob.clock.run_for(2000)
    expect(bob.locator("#inbox-status")).to_contain_text("Approved Expense claim E-undo")
    expect(row).to_have_count(0)
    bob.clock.run_for(PAST_THE_WINDOW)
    release_held_decisions()
    _settled(bob)
    assert _decisions(wid) == [(wid, "approve")]

    # approved and the page left at once: the server records it once the window passes
    bob.locator(f'li[data-workflow="{left}"]').get_by_role("button", name="Approve").click()
    expect(bob.locator(".held")).to_contain_text("Approved Expense claim E-left")
    bob.get_by_role("link", name="My requests").click()
    assert _decisions(left) == []
    server_clock(UNDO_SECONDS + 1)
    assert release_held_decisions() == 1
    assert _decisions(left) == [(left, "approve")]


def test_approving_selected_rows_says_how_many_and_how_much_first(
    acme: Any, live_server: Any, browser: Browser, server_clock: Callable[[float], None]
) -> None:
    base = live_server.url
    wids = [expense_started(f"E-sel-{i}", amount=4_500_000) for i in range(3)]
    bob = _inbox(browser, base)
    for wid in wids:
        bob.locator(f'li[data-workflow="{wid}"] input.select').check()
    dialog = bob.locator("#confirm-decision")

    bob.get_by_role("button", name="Approve selected").click()

    expect(dialog).to_contain_text("Approve 3 requests, ₹1,35,000.00 in all?")
    shot(bob, "inbox-confirm-bulk")
    dialog.get_by_role("button", name="Keep it").click()
    _settled(bob)
    assert _decisions(*wids) == []
    bob.get_by_role("button", name="Approve selected").click()
    dialog.get_by_role("button", name="Approve 3").click()
    expect(bob.locator("#inbox-status")).to_contain_text("Approved 3 requests.")
    expect(bob.locator(".held")).to_have_count(3)  # each with its own Undo
    assert _decisions(*wids) == []
    server_clock(UNDO_SECONDS + 1)
    assert release_held_decisions() == 3
    approvals = WorkflowEvent.objects.filter(workflow_id__in=wids, type="DecisionRecorded")
    assert sorted(str(e.workflow_id) for e in approvals) == sorted(wids)
    assert len({e.request_id for e in approvals}) == 3


def test_the_bulk_total_is_written_as_the_server_writes_money(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    # app.js adds the amounts up and writes them itself: held equal to money_format
    from approvals.models import User
    from approvals.notifications.format import money_format
    from approvals.services.workflows import workflow_start

    amounts = [
        ("INR", 12_345_678_901),
        ("INR", 4_500_099),
        ("USD", 123_456_789),
        ("EUR", 4_500_005),
    ]
    for i, (currency, minor) in enumerate(amounts):
        workflow_start(
            submitter=User.objects.get(username="alice"),
            template_key="expense-approval",
            subject_type="expense",
            subject_id=f"E-mixed-{i}",
            data={"amountPaise": minor, "currency": currency, "department": "eng"},
        )
    bob = _inbox(browser, live_server.url)
    for box in bob.locator("li.task input.select").all():
        box.check()

    bob.get_by_role("button", name="Approve selected").click()

    totals = [
        money_format(minor=4_500_005, currency="EUR"),
        money_format(minor=12_345_678_901 + 4_500_099, currency="INR"),
        money_format(minor=123_456_789, currency="USD"),
    ]
    expect(bob.locator("#confirm-decision .question")).to_have_text(
        f"Approve 4 requests, {' and '.join(totals)} in all?"
    )
