"""Four eyes on rules in a real headless Chromium: fiona's Save keeps a draft that
farah reads in words and publishes; an organisation that turned the rule off is asked
before Save publishes, in the dialog the decisions use, with "Keep editing" focused."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from approvals.models import Tenant, WorkflowTemplate

from ..a11y import assert_accessible
from ..helpers import EXPENSE
from ..pages.test_browser import shot
from .test_browser_condition_builder import _admin, second_admin_publishes

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_a_draft_is_read_in_words_and_published_by_a_second_finance_admin(
    acme: Any, live_server: Any, browser: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    page = _admin(browser, live_server.url)
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/")

    page.get_by_label("Step 3: Deadline: how many").fill("4")
    page.get_by_role("button", name="Save", exact=True).click()

    expect(page.locator("#changes")).to_contain_text("Finance: deadline 4 days (was 2 days)")
    expect(page.get_by_role("button", name="Publish as version 2")).to_have_count(0)
    assert_accessible(page, "the draft, read by its author")
    farah = second_admin_publishes(browser, live_server.url, page.url)
    expect(farah.locator(".messagelist")).to_contain_text("drafted by Fiona and published by Farah")
    v2 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=2)
    assert (v2.drafted_by.username, v2.published_by.username) == ("fiona", "farah")
    farah.set_viewport_size({"width": 390, "height": 800})
    assert farah.evaluate("document.documentElement.scrollWidth") <= 391


def test_with_four_eyes_off_save_asks_first_naming_the_consequence(
    acme: Any, live_server: Any, browser: Any
) -> None:
    Tenant.objects.filter(pk=acme.pk).update(template_four_eyes=False)
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    page = _admin(browser, live_server.url)
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/")
    expect(page.locator("[id=confirm-decision]")).to_have_count(1)  # one dialog, one id
    page.get_by_label("Step 3: Deadline: how many").fill("4")

    # Save asks first; the safe choice has the focus; keeping on editing publishes nothing
    page.get_by_role("button", name="Save", exact=True).click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("no second person reviews it first")
    expect(dialog.get_by_role("button", name="Keep editing")).to_be_focused()
    shot(page, "editor-publish-asks-first")
    dialog.get_by_role("button", name="Keep editing").click()
    expect(dialog).to_be_hidden()
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1

    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_role("dialog").get_by_role("button", name="Publish now").click()
    expect(page.locator(".messagelist")).to_contain_text("Published expense-approval version 2")
    assert WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=2).drafted_by is None
