"""olga finds a request nobody can finish on the attention page, in a real headless
Chromium, and adds an approver to it; victor then finds it in his inbox. axe-core checks
the attention page and the operations page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User, WorkflowEvent

from ..a11y import assert_accessible
from ..pages.test_browser import sign_in
from .test_add_approver import stuck
from .test_browser_operations import admin_sign_in, shot

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_olga_adds_an_approver_to_a_request_nobody_can_finish(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    # given: Laptop request L-1 waits on Bob, who has left
    wid = stuck(acme)
    olga = admin_sign_in(browser, live_server.url, "olga")

    olga.goto(f"{live_server.url}/admin/approvals/workflow/attention/")
    expect(olga.get_by_role("heading", name="Requests nobody can finish")).to_be_visible()
    row = olga.locator("#stuck tbody tr", has_text="Laptop request L-1")
    expect(row).to_contain_text(
        "Nobody can finish the Manager approval step: every open task belongs to someone "
        "who has left."
    )
    shot(olga, "admin-attention-stuck")
    assert_accessible(olga, "the attention page with a request nobody can finish")

    # when: olga adds Victor from the request's operations page
    row.get_by_role("link", name="Deal with it").click()
    expect(olga.get_by_role("heading", name="Add an approver")).to_be_visible()
    assert_accessible(olga, "the operations page of a stuck request")
    form = olga.locator("#op-add_approver")
    form.get_by_label("Person to add").fill("Victor")
    form.get_by_label("Reason").fill("Bob left; Victor approves for his team")
    shot(olga, "admin-operations-add-approver")
    form.get_by_role("button", name="Add an approver").click()

    # then
    expect(
        olga.get_by_text("Victor was added as an approver on the Manager approval step.")
    ).to_be_visible()
    shot(olga, "admin-operations-added")
    added = WorkflowEvent.objects.filter(workflow_id=wid, type="ApproverAdded").get()
    assert added.actor == User.objects.get(username="olga")
    olga.goto(f"{live_server.url}/admin/approvals/workflow/attention/")
    expect(olga.locator("#stuck")).to_have_count(0)

    victor = sign_in(browser, live_server.url, "victor")
    expect(victor.locator("main")).to_contain_text("L-1")
    shot(victor, "inbox-after-approver-added")
