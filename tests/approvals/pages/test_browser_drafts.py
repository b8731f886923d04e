"""Drafts in a real headless Chromium: save an incomplete request as a draft, find it
first on My requests, edit and submit it, delete another after confirming; and the
manager's rejection reaching the submitter with its reason."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import Draft, User, Workflow
from approvals.services.workflows import workflow_decide

from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_a_draft_is_saved_listed_first_edited_submitted_and_another_deleted(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    expense_started("E-EARLIER")  # something alice submitted before

    # alice starts a request and saves it half-done
    alice = sign_in(browser, base, "alice")
    alice.get_by_role("link", name="New request").click()
    alice.get_by_role("link", name="Expense claim").click()
    alice.get_by_label("Amount").fill("45000.00")
    alice.get_by_label("What was it for?").fill("Conference travel")
    alice.get_by_role("button", name="Save as draft").click()

    # My requests: the draft first, with its actions; nothing routed
    expect(alice.get_by_role("heading", name="My requests")).to_be_visible()
    expect(alice.locator(".flash.success")).to_contain_text("Saved a draft of your Expense claim")
    draft = Draft.objects.get()
    row = alice.locator(f'tr[data-draft="{draft.pk}"]')
    expect(row).to_contain_text("₹45,000.00")
    expect(row.get_by_role("link", name="Edit")).to_be_visible()
    expect(row.get_by_role("button", name="Submit")).to_be_visible()
    expect(row.get_by_role("link", name="Delete")).to_be_visible()
    tables = alice.locator("table.tasks")
    expect(tables.first).to_contain_text("₹45,000.00")
    expect(tables.nth(1)).to_contain_text("E-EARLIER")
    shot(alice, "my-requests-with-a-draft")
    assert Workflow.objects.count() == 1

    # Submit from the list: incomplete, so back to its form naming what is missing
    row.get_by_role("button", name="Submit").click()
    expect(alice.locator(".flash.error")).to_contain_text("fill in “Department” and “Reference”")
    expect(alice.get_by_label("Amount")).to_have_value("45000.00")
    expect(alice.get_by_label("What was it for?")).to_have_value("Conference travel")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Reference").fill("E-DRAFTED")
    alice.get_by_role("button", name="Submit").click()
    expect(alice.locator(".status")).to_have_text("Waiting: Manager")
    wf = Workflow.objects.get(subject_id="E-DRAFTED")
    assert wf.data["department"] == "eng"

    # the manager rejects it with a reason: alice sees it on her request
    workflow_decide(
        user=User.objects.get(username="bob"),
        workflow_id=wf.pk,
        decision="reject",
        request_id="bob-no",
        comment="Please attach the hotel invoice",
    )
    alice.goto(f"{base}/workflows/{wf.pk}")
    note = alice.locator("#resubmit .sent-back-note")
    expect(note).to_contain_text("Bob sent it back to you from the Manager step")
    expect(note).to_contain_text("“Please attach the hotel invoice”")
    shot(alice, "sent-back-with-reason")

    # another draft, deleted after confirming
    alice.goto(f"{base}/workflows/new?template=expense-approval")
    alice.get_by_label("Reference").fill("E-SCRAP")
    alice.get_by_role("button", name="Save as draft").click()
    scrap = Draft.objects.get(subject_id="E-SCRAP")
    alice.locator(f'tr[data-draft="{scrap.pk}"]').get_by_role("link", name="Delete").click()
    expect(
        alice.get_by_role("heading", name="Delete the draft Expense claim E-SCRAP?")
    ).to_be_visible()
    shot(alice, "delete-draft-confirm")
    assert Draft.objects.filter(pk=scrap.pk).exists()
    alice.get_by_role("button", name="Delete the draft").click()
    expect(alice.locator(".flash.success")).to_contain_text(
        "Deleted the draft Expense claim E-SCRAP."
    )
    assert not Draft.objects.filter(pk=scrap.pk).exists()
