"""The inbox in a real headless Chromium: each row reads the request's summary line,
and a task that moved on while the page was open says which step the request waits
for."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User
from approvals.pages.common import UNDO_SECONDS
from approvals.services.workflows import workflow_reassign, workflow_start

from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
    pytest.mark.usefixtures("undo_window_closed"),
]


def _expense(subject: str, description: str, amount: int) -> str:
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id=subject,
        data={
            "amountPaise": amount,
            "currency": "INR",
            "department": "eng",
            "description": description,
        },
    )
    return str(started.workflow_id)


def test_the_inbox_reads_summaries_and_names_the_step_a_moved_task_waits_for(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    # given: two claims wait for bob
    dinner = _expense("R-8", "Team dinner in Pune", 4_500_000)
    _expense("R-9", "Conference tickets", 1_25_00_000)
    bob = sign_in(browser, live_server.url, "bob")
    row = bob.locator(f'li[data-workflow="{dinner}"]')
    expect(row.locator(".summary")).to_have_text("Team dinner in Pune, ₹45,000.00")
    expect(row).to_contain_text("Expense claim R-8")
    expect(row).to_contain_text("Manager step")
    shot(bob, "inbox-summaries")

    # when: an organisation admin hands the dinner to victor while bob's page is open
    workflow_reassign(
        user=User.objects.get(username="olga"),
        workflow_id=dinner,
        from_user="bob",
        to_user="victor",
        request_id="olga-1",
    )
    bob.clock.install()
    row.get_by_role("button", name="Approve").click()
    bob.clock.run_for((UNDO_SECONDS + 1) * 1000)  # past the Undo window

    # then: the page says which step the request waits for, and the row stays
    expect(bob.locator("#inbox-status")).to_have_text(
        "This request is waiting for the Manager step; it is not yours to decide."
    )
    shot(bob, "inbox-not-your-step")
