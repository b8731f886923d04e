"""The pages in a real headless Chromium: submit an expense, approve it from the inbox
and from the workflow page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from approvals.models import Workflow, WorkflowEvent

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Playwright's sync API refuses to start inside a running event loop; pytest has none.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def sign_in(browser: Browser, base: str, username: str) -> Page:
    page = browser.new_context().new_page()
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()
    return page


def test_submit_approve_from_inbox_and_from_the_workflow_page(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url

    # alice submits an expense through the form built from the template's schema
    alice = sign_in(browser, base, "alice")
    alice.get_by_role("link", name="New request").click()
    alice.get_by_role("link", name="Expense claim").click()
    alice.get_by_label("amountPaise").fill("4500000")
    alice.get_by_label("currency").fill("INR")
    alice.get_by_label("department").fill("engineering")
    alice.get_by_label("Reference").fill("E-2026-001")
    alice.get_by_role("button", name="Submit").click()
    expect(alice.locator(".status")).to_have_text("PENDING_MANAGER")
    wf = Workflow.objects.get(subject_id="E-2026-001")

    # bob approves from his inbox
    bob = sign_in(browser, base, "bob")
    row = bob.locator(f'tr[data-workflow="{wf.pk}"]')
    expect(row).to_contain_text("E-2026-001")
    row.get_by_placeholder("Comment (optional)").fill("Fine by me")
    row.get_by_role("button", name="Approve").click()
    expect(bob.locator(".flash.success")).to_contain_text("PENDING_FINANCE")
    expect(bob.locator(f'tr[data-workflow="{wf.pk}"]')).to_have_count(0)

    # fiona approves from the workflow page; the history names both
    fiona = sign_in(browser, base, "fiona")
    fiona.goto(f"{base}/workflows/{wf.pk}")
    fiona.get_by_role("button", name="Approve").click()
    expect(fiona.locator(".status")).to_have_text("APPROVED")
    expect(fiona.locator(".history")).to_contain_text("by bob")
    expect(fiona.locator(".history")).to_contain_text("Fine by me")
    assert WorkflowEvent.objects.filter(workflow=wf, type="DecisionRecorded").count() == 2


def test_a_second_click_on_the_same_rendered_button_is_recorded_once(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    from approvals.services.workflows import workflow_start

    alice_user = acme.users.get(username="alice")
    started = workflow_start(
        submitter=alice_user,
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-dup",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    wid = str(started.workflow_id)
    bob = sign_in(browser, live_server.url, "bob")
    form = bob.locator(f'tr[data-workflow="{wid}"] form')
    request_id = form.locator('input[name="request_id"]').get_attribute("value")
    csrf = form.locator('input[name="csrfmiddlewaretoken"]').get_attribute("value")

    # the same form posted twice (a double click, a resent request)
    for _ in range(2):
        response = bob.request.post(
            f"{live_server.url}/workflows/{wid}/decide",
            form={
                "decision": "approve",
                "request_id": request_id or "",
                "csrfmiddlewaretoken": csrf or "",
                "next": "/",
            },
            headers={"Referer": live_server.url + "/"},
        )
        assert response.ok

    assert WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").count() == 1


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/", "/\\evil.example"])
def test_the_decide_form_never_redirects_off_site(acme: Any, client: Any, target: str) -> None:
    from approvals.services.workflows import workflow_start

    alice_user = acme.users.get(username="alice")
    wid = workflow_start(
        submitter=alice_user,
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-redirect",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    ).workflow_id
    client.force_login(acme.users.get(username="bob"))

    response = client.post(
        f"/workflows/{wid}/decide", {"decision": "approve", "request_id": "r-1", "next": target}
    )

    assert response.status_code == 302
    assert response["Location"] == "/"
