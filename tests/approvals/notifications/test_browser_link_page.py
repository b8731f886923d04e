"""The one-click link's confirmation page, in headless Chromium: it leads with the
request's summary line (what the money is for), links to the full request, and passes
axe-core (WCAG 2.1 A/AA). A screenshot goes to screenshots/link-confirm-summary.png."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User, Workflow
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.models import MailMessage
from approvals.services.workflows import workflow_start

from ..a11y import assert_accessible

SHOTS = Path(__file__).resolve().parents[3] / "screenshots"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_the_confirmation_page_leads_with_the_summary_and_links_to_the_request(
    acme: Any, live_server: Any, browser: Browser, settings: Any
) -> None:
    settings.APPROVALS_BASE_URL = live_server.url
    SHOTS.mkdir(exist_ok=True)
    # given alice's hotel claim waiting for bob, and the Reject link in his mail
    wid = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-2001",
        data={
            "amountPaise": 4_500_000,
            "currency": "INR",
            "department": "eng",
            "description": "Hotel for the Pune offsite",
        },
    ).workflow_id
    row = MailMessage.objects.get(workflow_id=wid, kind="task_assigned")
    # the Manager step sends a rejection back to Alice: its link says so
    reject = re.search(r"^Send back to Alice: (\S+)$", mail_bodies(row)[0], re.M)
    assert reject is not None

    # when bob opens it, without a session
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.goto(reject.group(1))

    # then the page leads with what the money is for, and links to the whole request
    expect(page.get_by_role("heading", name="Send this request back to Alice?")).to_be_visible()
    lead = page.locator("h1 + p")
    expect(lead).to_have_text("Hotel for the Pune offsite, ₹45,000.00")
    full = page.get_by_role("link", name="See the full request")
    expect(full).to_have_attribute("href", f"/workflows/{wid}")
    expect(page.get_by_text("Expense claim E-2001")).to_be_visible()
    expect(page.get_by_label("Reason (required: Alice reads it)")).to_be_visible()
    assert_accessible(page, "the one-click link's confirmation page")
    page.screenshot(path=str(SHOTS / "link-confirm-summary.png"), full_page=True)
    assert Workflow.objects.get(pk=wid).current_step == "manager"  # opening decided nothing

    # and the link to the request asks bob to sign in, then shows it
    full.click()
    expect(page).to_have_url(re.compile(r"/login|/accounts/login|/sign-in"))
    context.close()
