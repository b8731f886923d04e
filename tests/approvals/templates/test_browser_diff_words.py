"""A finance admin compares two versions of a workflow template in a real headless
Chromium: the changes read as sentences (the threshold in rupees, the new step where it
stands, the deadline in days), the JSON line diff is folded under "Technical details" and
opens on a click. The page is written to screenshots/ (ignored by git) on every run."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from approvals.models import WorkflowTemplate
from approvals.services.templates import workflow_template_publish

from ..helpers import EXPENSE

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

SHOTS = Path(__file__).resolve().parents[3] / "screenshots"


def test_a_finance_admin_reads_what_changes_between_versions_in_words(
    acme: Any, live_server: Any, browser: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    doc = copy.deepcopy(v1.definition)
    steps = {s["id"]: s for s in doc["steps"]}
    steps["vp"]["when"] = "data.amountPaise > 5000000"
    steps["finance"]["deadline"] = "P3D"
    ceo = {"id": "ceo", "title": "CEO", "kind": "approval", "approvers": [{"user": "victor"}]}
    doc["steps"].insert(2, ceo)
    v2 = workflow_template_publish(tenant=acme, definition=doc)
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "fiona")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")

    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v2.pk}/diff/?a=1&b=2")

    changes = page.locator("#changes li")
    expect(changes).to_have_text(
        [
            "New step: CEO, after VP",
            "CEO: approves always",
            "CEO: approvers: Victor",
            "VP: approves when Amount is above ₹50,000.00 (was ₹1,00,000.00)",
            "Finance: deadline 3 days (was 2 days)",
        ]
    )
    expect(page.locator("#diff")).not_to_be_visible()
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "template-diff-words.png"), full_page=True)
    page.click("summary:has-text('Technical details')")
    expect(page.locator("#diff .add").first).to_be_visible()
    page.screenshot(path=str(SHOTS / "template-diff-technical.png"), full_page=True)
