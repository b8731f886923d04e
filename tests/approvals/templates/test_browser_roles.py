"""The roles screen of a workflow template in a real headless Chromium, at 1280 and
390 px: fiona opens it from the template's page, reads the rule of each role, types
part of a name and picks the person the search suggests (no list of the organisation),
and sees them named; nothing overflows the narrow screen."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from approvals import access
from approvals.models import User, WorkflowTemplate

from ..a11y import assert_accessible
from ..helpers import EXPENSE
from ..pages.test_browser import shot
from .test_browser_condition_builder import _admin

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


@pytest.mark.parametrize("width", [1280, 390])
def test_naming_who_may_start_a_template_by_typing_a_name(
    acme: Any, live_server: Any, browser: Any, width: int
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    page = _admin(browser, live_server.url)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/")
    page.get_by_role("link", name="Who may start, edit and see its requests").click()

    start = page.locator("section#start_workflowtemplate")
    expect(start.get_by_role("heading")).to_have_text("Who may start this workflow template")
    expect(start).to_contain_text("every member of your organisation may start it")
    expect(page.locator("section#edit_workflowtemplate")).to_contain_text("Finance admins")
    assert page.locator("datalist option").count() == 0  # nobody listed before typing

    box = start.get_by_label("or a person")
    box.press_sequentially("vic")
    expect(page.locator("#start_workflowtemplate-people option")).to_have_count(1)
    option = page.locator("#start_workflowtemplate-people option").first
    assert option.get_attribute("value") == "victor"
    box.fill("victor")
    start.get_by_role("button", name="Add").click()

    expect(page.locator(".messagelist")).to_contain_text(
        "Victor is now named under “Who may start this workflow template”."
    )
    expect(page.locator("section#start_workflowtemplate")).to_contain_text("Victor")
    alice = User.objects.get(username="alice")
    assert not access.may_start(alice, EXPENSE)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    assert_accessible(page, f"the roles screen at {width} px")
    shot(page, f"template-roles-{width}")
