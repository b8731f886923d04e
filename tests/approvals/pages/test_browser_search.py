"""The search page in a real headless Chromium, by keyboard: the same parameters as the
API in its address, the organisation's steps in words, a refused range said in place."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User
from approvals.services.workflows import workflow_start

from ..browser import CHROMIUM
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed"),
]


def _start(subject: str, who: str = "alice") -> str:
    return str(
        workflow_start(
            submitter=User.objects.get(username=who),
            template_key="expense-approval",
            subject_type="expense",
            subject_id=subject,
            data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        ).workflow_id
    )


def test_searching_by_keyboard_with_the_apis_parameters(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    trip = _start("TRIP-1")
    _start("TAXI-3", who="victor")  # not alice's: she may not see it
    alice = sign_in(browser, live_server.url, "alice")

    alice.get_by_role("link", name="Search").click()
    alice.get_by_label("Words").fill("trip")
    alice.get_by_label("Status").select_option(label="Waiting: Manager")
    alice.get_by_label("Submitted from").fill("2020-01-01")
    alice.get_by_label("Words").press("Enter")

    rows = alice.locator("table.tasks tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-workflow", trip)
    expect(rows.first).to_contain_text("Rs 45,000.00")
    query = parse_qs(urlparse(alice.url).query)
    assert query["text"] == ["trip"] and query["status"] == ["PENDING_MANAGER"]
    shot(alice, "search-results")

    alice.get_by_label("Submitted before").fill("2019-12-31")
    alice.get_by_role("button", name="Search").click()
    expect(alice.get_by_role("alert")).to_contain_text("must be later than submitted from")
    expect(rows).to_have_count(0)
    alice.set_viewport_size({"width": 380, "height": 900})
    shot(alice, "search-refused-narrow")
