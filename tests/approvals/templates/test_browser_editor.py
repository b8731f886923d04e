"""A finance admin edits a workflow template in a real headless Chromium: she changes
a deadline and a threshold in the structured editor, sees what changes and a try-it
run, publishes; a workflow started afterwards follows the new rule while one started
before keeps the old."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from approvals.models import Workflow, WorkflowTemplate

from ..helpers import EXPENSE, decide, start_expense
from .test_browser_condition_builder import second_admin_publishes

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

AMOUNT = 4_500_000  # ₹45,000.00: below the VP's threshold of version 1, above version 2's


def test_a_finance_admin_changes_a_deadline_and_a_threshold(
    acme: Any, live_server: Any, browser: Any, api: Any
) -> None:
    # given a workflow running on version 1
    old = start_expense(api("alice"), AMOUNT, subject="E-old").json()["workflowId"]
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    page = browser.new_context().new_page()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "fiona")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/")

    # when she gives the manager one day instead of two and lowers the VP's threshold
    deadline = page.get_by_label("Step 1: Deadline: how many")
    expect(deadline).to_have_value("2")
    deadline.fill("1")
    nav = page.get_by_role("navigation", name="Parts of this page")
    nav.get_by_role("link", name="Conditions").click()
    threshold = page.locator("#when-vp-0-value")
    expect(threshold).to_have_value("1,00,000")
    threshold.fill("40,000")
    nav.get_by_role("link", name="Try it").click()
    page.select_option("#id_try_submitter", "alice")
    page.fill("#id_try-amountPaise", "45,000")
    page.fill("#id_try-department", "x")
    # Try it assumes everyone acts promptly; the new deadline shows only when someone is late
    page.get_by_label("Someone is late").check()
    page.click("input[name=_preview]")

    # then she sees what changes and what a ₹45,000.00 claim would do, unpublished
    expect(page.locator("#preview")).to_contain_text("Preview only: nothing is published")
    diff = page.locator("#diff")
    expect(diff.locator(".del")).to_contain_text(['"P2D"', '"data.amountPaise > 10000000"'])
    expect(diff.locator(".add")).to_contain_text(['"P1D"', '"data.amountPaise > 4000000"'])
    trial = page.locator("#trial")
    expect(trial).to_contain_text("Someone is late")
    expect(trial.locator("tr", has_text="Manager").first).to_contain_text("Asks Bob")
    expect(trial.locator("tr", has_text="Deadline passed").first).to_contain_text("1 day")
    expect(trial.locator("tr", has_text="VP").first).not_to_contain_text("Skipped")
    assert WorkflowTemplate.objects.filter(key=EXPENSE).count() == 1

    # when she saves it and farah, the second finance admin, publishes it
    page.click("input[name=_save]")
    expect(page.locator(".messagelist")).to_contain_text("Saved as a draft")
    farah = second_admin_publishes(browser, live_server.url, page.url)
    expect(farah.locator("#versions")).to_contain_text("version 2")

    # then a new workflow follows the new rule and the old one keeps the old
    new = start_expense(api("alice"), AMOUNT, subject="E-new").json()["workflowId"]
    assert decide(api("bob"), old, "approve", "old-1").status_code == 200
    assert decide(api("bob"), new, "approve", "new-1").status_code == 200
    old_wf, new_wf = Workflow.objects.get(pk=old), Workflow.objects.get(pk=new)
    assert (old_wf.template_version, old_wf.current_step) == (1, "finance")
    assert (new_wf.template_version, new_wf.current_step) == (2, "vp")
    assert old_wf.template.definition["steps"][0]["deadline"] == "P2D"
    assert new_wf.template.definition["steps"][0]["deadline"] == "P1D"


@pytest.mark.parametrize("key", [EXPENSE, "purchase-request"], ids=["expense", "purchase"])
def test_the_editor_draws_every_step_of_each_demo_template(
    acme: Any, live_server: Any, browser: Any, key: str
) -> None:
    template = WorkflowTemplate.objects.get(tenant=acme, key=key, version=1)
    page = browser.new_context().new_page()
    script_errors: list[str] = []
    page.on("pageerror", lambda exc: script_errors.append(str(exc)))
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "fiona")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")

    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{template.pk}/change/")

    ids = page.locator('#step-cards input[name^="step-"][name$="-id"]')
    expect(ids).to_have_count(len(template.definition["steps"]))
    for i, step in enumerate(template.definition["steps"]):
        expect(ids.nth(i)).to_have_value(step["id"])
    assert script_errors == []
