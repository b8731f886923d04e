"""No slip is final, in a real headless Chromium: withdrawing asks a reason and asks
first (its "Keep it" focused), then reads "Withdrawn" on the request, in the history
and in the lists; an organisation admin's cancel on the "Deal with it" page asks first
and reads "Cancelled by Olga: <reason>". Screenshots at 1280 and 390 px wide."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from approvals.models import User, Workflow, WorkflowEvent
from approvals.services.workflows import workflow_decide

from ..operations.test_browser_operations import admin_sign_in
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

NARROW = {"width": 390, "height": 844}


def _sent_back(subject: str) -> str:
    wid = expense_started(subject)
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=wid,
        decision="send_back",
        request_id=f"bob-{subject}",
        comment="Attach the receipt",
    )
    return wid


def _cancels(wid: str) -> int:
    return WorkflowEvent.objects.filter(workflow_id=wid, type="WorkflowCancelled").count()


def _no_overflow(page: Page) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= page.viewport_size["width"], wide  # type: ignore[index]


def test_withdrawing_asks_a_reason_and_first_then_reads_withdrawn_everywhere(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = _sent_back("E-W1")
    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/{wid}")
    dialog = alice.locator("#confirm-decision")

    # the form to resubmit has no button that ends the request
    expect(alice.locator("#resubmit").get_by_role("button", name="Withdraw")).to_have_count(0)
    shot(alice, "sent-back-1280")

    # without a reason: refused before anything is asked
    alice.locator("#withdraw").get_by_role("button", name="Withdraw").click()
    expect(alice.locator("#withdraw-error")).to_contain_text("Say why you are withdrawing")
    expect(dialog).not_to_be_visible()
    expect(alice.get_by_role("button", name="Resubmit")).to_be_visible()  # still her changes
    expect(alice.get_by_role("button", name="Approve")).to_have_count(0)

    alice.get_by_label("Why are you withdrawing it?").fill("Booked twice by mistake")
    alice.locator("#withdraw").get_by_role("button", name="Withdraw").click()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(
        "Withdraw Expense claim E-W1? It stops for good and cannot be resubmitted."
    )
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()
    shot(alice, "withdraw-asks-1280")
    alice.keyboard.press("Enter")  # Enter takes the safe choice
    expect(dialog).not_to_be_visible()
    assert _cancels(wid) == 0

    alice.locator("#withdraw").get_by_role("button", name="Withdraw").click()
    dialog.get_by_role("button", name="Withdraw").click()

    expect(alice.locator(".flash.success")).to_contain_text("You withdrew")
    expect(alice.locator(".status")).to_have_text("Withdrawn")
    expect(alice.locator(".status-sentence")).to_have_text(
        "Withdrawn by Alice: Booked twice by mistake"
    )
    expect(alice.locator("ol.timeline")).to_contain_text(
        "Alice withdrew the request: Booked twice by mistake"
    )
    expect(alice.locator("main")).not_to_contain_text("Cancelled")
    shot(alice, "withdrawn-1280")
    assert Workflow.objects.get(pk=wid).public_status == "WITHDRAWN"
    assert _cancels(wid) == 1

    alice.get_by_role("link", name="My requests").click()
    row = alice.locator("tr", has_text="E-W1")
    expect(row).to_contain_text("Withdrawn")
    expect(row).not_to_contain_text("Cancelled")

    alice.set_viewport_size(NARROW)
    alice.goto(f"{base}/workflows/{wid}")
    _no_overflow(alice)
    shot(alice, "withdrawn-390")


def test_withdrawing_without_the_script_asks_on_a_page_first(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = expense_started("E-W2")
    plain = browser.new_context(java_script_enabled=False).new_page()
    plain.goto(f"{base}/accounts/login/?next=/workflows/{wid}")
    plain.get_by_label("Username").fill("alice")
    plain.get_by_label("Password").fill("demo")
    plain.get_by_role("button", name="Sign in").click()

    plain.get_by_label("Why are you withdrawing it?").fill("Wrong month")
    plain.locator("#withdraw").get_by_role("button", name="Withdraw").click()

    expect(plain.get_by_role("heading", level=1)).to_have_text(
        "Withdraw Expense claim E-W2? It stops for good and cannot be resubmitted."
    )
    expect(plain.get_by_label("Why are you withdrawing it?")).to_have_value("Wrong month")
    assert _cancels(wid) == 0
    plain.get_by_role("button", name="Withdraw").click()
    expect(plain.locator(".status")).to_have_text("Withdrawn")
    assert _cancels(wid) == 1


def test_an_admins_cancel_asks_first_and_reads_cancelled_by_her(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = expense_started("E-C1")
    olga = admin_sign_in(browser, base, "olga")
    olga.goto(f"{base}/admin/approvals/workflow/{wid}/operations/")
    dialog = olga.locator("#confirm-decision")
    forms = olga.locator("form.operation")

    expect(forms.last).to_have_id("op-cancel")  # what ends it for good comes last
    cancel = olga.locator("#op-cancel")
    cancel.get_by_label("Reason").fill("Submitted twice")
    cancel.get_by_role("button", name="Cancel the request").click()

    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(
        "Cancel Expense claim E-C1? Its completed steps are undone and it ends for good."
    )
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()
    shot(olga, "admin-cancel-asks-1280")
    dialog.get_by_role("button", name="Keep it").click()
    assert _cancels(wid) == 0

    cancel.get_by_role("button", name="Cancel the request").click()
    dialog.get_by_role("button", name="Cancel the request").click()

    expect(olga.locator(".messagelist")).to_contain_text("Cancelled by Olga: Submitted twice")
    assert _cancels(wid) == 1
    olga.set_viewport_size(NARROW)
    shot(olga, "admin-cancelled-390")

    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/{wid}")
    expect(alice.locator(".status")).to_have_text("Cancelled")
    expect(alice.locator(".status-sentence")).to_have_text("Cancelled by Olga: Submitted twice")
    expect(alice.locator("ol.timeline")).to_contain_text(
        "Olga cancelled the request: Submitted twice"
    )
    assert Workflow.objects.get(pk=wid).public_status == "CANCELLED"


def test_an_offboarding_asks_first_but_its_preview_does_not(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    expense_started("E-O1")  # waits for bob
    olga = admin_sign_in(browser, base, "olga")
    olga.goto(f"{base}/admin/approvals/user/offboard/?person=bob")
    dialog = olga.locator("#confirm-decision")

    olga.get_by_label("Why they are leaving:").fill("Left the company")
    olga.get_by_role("button", name="Show where the tasks go").click()
    expect(dialog).not_to_be_visible()
    olga.get_by_role("button", name="Deactivate").click()

    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("They can no longer sign in")
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()
    dialog.get_by_role("button", name="Keep it").click()
    assert User.objects.get(username="bob").is_active
