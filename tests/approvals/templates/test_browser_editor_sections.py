"""The workflow template editor is a short page: its parts (Steps, Conditions, Try it,
Preview, Versions, Diagram) are links at the top and only the chosen part shows, in a
real headless Chromium at 1280x800. Each part passes axe-core; a link to a field in a
hidden part (a problem at the top) opens that part; every field still posts."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from approvals.models import WorkflowTemplate

from ..a11y import assert_accessible
from ..helpers import EXPENSE
from ..pages.test_browser import shot
from .test_browser_condition_builder import _admin

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

# Before the parts were shown one at a time the page was 6,154 px tall at 1280x800.
TALLEST = 4_000
PARTS = ("Steps", "Conditions", "Try it", "Versions", "Diagram")


def _editor(browser: Any, base: str, path: str) -> Page:
    page = _admin(browser, base)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{base}{path}")
    return page


def _height(page: Page) -> int:
    height: int = page.evaluate("document.body.scrollHeight")
    return height


def test_the_editor_shows_one_part_at_a_time_on_a_short_page(
    acme: Any, live_server: Any, browser: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    change = f"/admin/approvals/workflowtemplate/{v1.pk}/change/"
    page = _editor(browser, live_server.url, change)
    nav = page.get_by_role("navigation", name="Parts of this page")

    # the steps come first, alone; each link shows its part and hides the others
    expect(nav.get_by_role("link", name="Steps")).to_have_attribute("aria-current", "true")
    expect(page.locator("#conditions")).to_be_hidden()
    heights = {"Steps": _height(page)}
    for words in PARTS:
        nav.get_by_role("link", name=words).click()
        expect(nav.get_by_role("link", name=words)).to_have_attribute("aria-current", "true")
        shown = page.locator(".wt-section:visible")
        expect(shown).to_have_count(1)
        heights[words] = _height(page)
        shot(page, "template-editor-" + words.lower().replace(" ", "-"))
        assert_accessible(page, f"the editor's {words} part")
    assert max(heights.values()) < TALLEST, heights
    expect(page.locator("#versions")).to_contain_text("version 1")

    # a part named in the address opens first
    page.goto(f"{live_server.url}{change}?part=diagram")
    expect(page.locator("#diagram svg")).to_be_visible()
    expect(page.locator("#steps")).to_be_hidden()

    # a problem at the top opens the part that holds its field; hidden fields still post
    page.goto(f"{live_server.url}{change}")
    nav.get_by_role("link", name="Conditions").click()
    page.get_by_label("Step 2, VP, condition 1: value in rupees").fill("fifty thousand")
    nav.get_by_role("link", name="Steps").click()
    page.click("input[name=_preview]")
    expect(page.locator("#conditions")).to_be_visible()
    expect(page.locator("#steps")).to_be_hidden()
    page.get_by_label("Step 2, VP, condition 1: value in rupees").fill("50,000")
    page.click("input[name=_preview]")
    expect(page.locator("#problems")).to_have_count(0)
    expect(page.locator("#preview")).to_be_visible()  # after Preview, the preview first
    expect(page.locator("#changes")).to_contain_text("VP: approves when Amount is above ₹50,000")
    assert _height(page) < TALLEST
    assert_accessible(page, "the editor's preview")
    assert WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).count() == 1
