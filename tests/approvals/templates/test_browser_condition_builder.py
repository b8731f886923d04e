"""fiona, a finance admin, lowers the VP's threshold of expense claims from ₹1,00,000 to
₹50,000 in a real headless Chromium, in rupees, with the condition builder: she reads
what changes in words, tries a ₹60,000 claim through the form employees fill in,
publishes, and a new claim of that size goes to the VP. Retire asks first, naming its
effect; saving with no change publishes nothing. axe-core finds nothing on the editor."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from approvals.models import Workflow, WorkflowTemplate, WorkflowTemplateDraft

from ..a11y import assert_accessible
from ..helpers import EXPENSE, decide, start_expense

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

SHOTS = Path(__file__).resolve().parents[3] / "screenshots"
CLAIM = 6_000_000  # ₹60,000.00: below version 1's VP threshold, above version 2's


def _admin(browser: Any, base: str) -> Page:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "fiona")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    return page


def second_admin_publishes(browser: Any, base: str, draft_url: str) -> Page:
    """Farah, the second finance admin, opens the draft fiona saved and publishes it."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", "farah")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    page.goto(draft_url)
    page.get_by_role("button", name=re.compile(r"^Publish as version \d+$")).click()
    # publishing cannot be taken back: the dialog asks first, "Keep it" focused
    dialog = page.locator("#confirm-decision")
    expect(dialog).to_contain_text("New requests follow it at once")
    expect(page.locator("#confirm-no")).to_be_focused()
    page.locator("#confirm-yes").click()
    return page


def test_fiona_moves_the_vp_threshold_in_rupees(
    acme: Any, live_server: Any, browser: Any, api: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    page = _admin(browser, live_server.url)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/")

    # the editor: sections to jump to, every input named, no Django "save and add another"
    nav = page.get_by_role("navigation", name="Parts of this page")
    for words in ("Steps", "Conditions", "Try it", "Versions", "Diagram"):
        expect(nav.get_by_role("link", name=words)).to_be_visible()
    expect(page.locator("input[name=_addanother], input[name=_continue]")).to_have_count(0)
    expect(page.get_by_label("Step 1: Deadline: how many")).to_have_value("2")
    assert_accessible(page, "the workflow template editor")

    # when she lowers the VP's threshold in rupees and tries a ₹60,000 claim by alice
    nav.get_by_role("link", name="Conditions").click()
    assert_accessible(page, "the editor's conditions")
    threshold = page.get_by_label("Step 2, VP, condition 1: value in rupees")
    expect(threshold).to_have_value("1,00,000")
    expect(page.get_by_label("Step 2, VP, condition 1: comparison")).to_have_value(">")
    threshold.fill("50,000")
    nav.get_by_role("link", name="Try it").click()
    page.get_by_label("Submitted by").select_option("alice")
    page.locator("#id_try-amountPaise").fill("60,000")
    page.locator("#id_try-department").fill("Sales")
    page.click("input[name=_preview]")

    # then she reads the change in words and what the claim would do, nothing published
    preview = page.locator("#preview")
    expect(preview).to_contain_text("Preview only: nothing is published")
    expect(preview.locator("#changes")).to_contain_text(
        "VP: approves when Amount is above ₹50,000.00 (was ₹1,00,000.00)"
    )
    vp_row = page.locator("#trial tbody tr", has_text="VP").first
    expect(vp_row).not_to_contain_text("Skipped")  # ₹60,000 now reaches the VP
    expect(preview.locator("svg.diagram")).to_have_count(1)  # the draft's flow beside it
    expect(page.get_by_label("Step 2, VP, condition 1: value in rupees")).to_have_value("50,000")
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "template-editor-preview.png"), full_page=True)

    # when she saves it and farah, the second finance admin, publishes it
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("Saved as a draft")
    farah = second_admin_publishes(browser, live_server.url, page.url)
    expect(farah.locator(".messagelist")).to_contain_text(
        "Published version 2, drafted by Fiona and published by Farah."
    )
    v2 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=2)
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v2.pk}/change/")
    assert v2.definition["steps"][1]["when"] == "data.amountPaise > 5000000"

    # then a new ₹60,000 claim goes to the VP after the manager
    claim = start_expense(api("alice"), CLAIM, subject="E-60k").json()["workflowId"]
    assert decide(api("bob"), claim, "approve", "b-1").status_code == 200
    assert Workflow.objects.get(pk=claim).current_step == "vp"

    # retire asks first, naming what it does, and does nothing until confirmed
    page.get_by_role("navigation", name="Parts of this page").get_by_role(
        "link", name="Versions"
    ).click()
    page.get_by_role("link", name="Retire (no new requests)…").click()
    expect(page.locator("#effect")).to_contain_text("Expense claim will no longer be offered to")
    expect(page.locator("#effect")).to_contain_text("1 running request finishes")
    assert_accessible(page, "the retire confirmation")
    page.get_by_role("link", name="Cancel: change nothing").click()
    assert WorkflowTemplate.objects.get(pk=v2.pk).retired_at is None

    # with four eyes on, Save only keeps a draft, so it asks nothing first; saving with
    # no change keeps no draft and publishes nothing, and says so
    expect(page.locator("[data-publish-asks]")).to_have_count(0)
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text(
        "Nothing changed from version 2, so nothing was published."
    )
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 2
    assert not WorkflowTemplateDraft.objects.filter(tenant=acme, closed_at__isnull=True).exists()
    assert errors == []


def test_a_bad_amount_and_a_negative_deadline_are_listed_at_the_top_in_words(
    acme: Any, live_server: Any, browser: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    page = _admin(browser, live_server.url)
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/#conditions")

    page.get_by_label("Step 2, VP, condition 1: value in rupees").fill("fifty thousand")
    page.click("input[name=_preview]")

    problems = page.locator("#problems")
    link = problems.get_by_role(
        "link", name="Step 2, VP: Amount: “fifty thousand” is not an amount"
    )
    expect(link).to_have_attribute("href", "#when-vp")
    assert "$." not in problems.inner_text()
    assert_accessible(page, "the editor with problems")
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "template-editor-problems.png"))
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1

    # a second row: choosing Currency draws its choices and offers only is / is not
    page.get_by_label("Step 2, VP, condition 1: value in rupees").fill("50,000")
    page.get_by_label("Step 2, VP, condition 2: field").select_option("currency")
    value = page.get_by_label("Step 2, VP, condition 2: value")
    expect(value).to_have_js_property("tagName", "SELECT")
    expect(page.locator("#when-vp-1-op option[value='>']")).to_be_disabled()
    value.select_option("USD")
    page.get_by_label("Step 2, VP: Only when").select_option("any")
    page.click("input[name=_preview]")
    expect(page.locator("#changes")).to_contain_text("VP: approves when")
    expect(page.locator("#problems")).to_have_count(0)
    expect(page.get_by_label("Step 2, VP, condition 2: value")).to_have_value("USD")

    # the Try it page of a published version takes the same form
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/try/")
    page.get_by_label("Submitted by").select_option("alice")
    page.get_by_label("Amount").fill("1,50,000")
    page.get_by_role("button", name="Try it").click()
    expect(page.locator("#trial tbody tr", has_text="VP").first).not_to_contain_text("Skipped")
    assert_accessible(page, "the Try it page")
