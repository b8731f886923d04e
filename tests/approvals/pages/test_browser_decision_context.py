"""The inbox with its context, in a real headless Chromium: a question to alice shows
in her inbox and My requests, the finance row shows the department, the receipts and
who approved before; each page passes axe-core and fits a 390 px screen."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User
from approvals.services.comments import workflow_comment

from ..a11y import assert_accessible
from ..helpers import decide, start_expense
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_questions_and_row_context_read_and_fit_on_a_phone(
    acme: Any, api: Any, live_server: Any, browser: Browser
) -> None:
    wid = start_expense(api("alice"), 4_500_000, department="sales").json()["workflowId"]
    assert decide(api("bob"), wid, "approve", "bob-ctx").status_code == 200
    workflow_comment(
        user=User.objects.get(username="fiona"),
        workflow_id=wid,
        text="@alice which client was the dinner with?",
        request_id=uuid.uuid4().hex,
    )
    base = live_server.url

    fiona = sign_in(browser, base, "fiona")
    row = fiona.locator(f"li.task[data-workflow='{wid}']")
    expect(row.locator(".facts")).to_have_text("Department: Sales")
    expect(row.locator(".receipts")).to_have_text("No receipt")
    expect(row.locator(".approved")).to_have_text("Approved by Bob (Manager)")
    assert_accessible(fiona, "fiona's inbox with the row's context")

    alice = sign_in(browser, base, "alice")
    questions = alice.get_by_role("region", name="Questions for you")
    expect(questions).to_contain_text("Fiona asked you")
    expect(questions).to_contain_text("which client was the dinner with?")
    assert_accessible(alice, "alice's inbox with a question")
    for page, name in ((fiona, "inbox-context"), (alice, "inbox-question")):
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 900})
            past = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert past <= 0, f"{name} runs {past} px past {width} px"
            shot(page, f"{name}-{width}")

    alice.get_by_role("link", name="My requests").click()
    expect(alice.get_by_role("region", name="Questions for you")).to_be_visible()
