"""The pages in a real headless Chromium: submit an expense, approve it from the inbox
and from the workflow page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from approvals.models import Workflow, WorkflowEvent
from approvals.pages.common import UNDO_SECONDS

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
    pytest.mark.usefixtures("undo_window_closed"),
]


def sign_in(browser: Browser, base: str, username: str) -> Page:
    page = browser.new_context().new_page()
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()
    return page


UNDO_PASSED = (UNDO_SECONDS + 1) * 1000  # ms: an inbox decision is sent after its Undo
SHOTS = Path(__file__).resolve().parents[3] / "screenshots"


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_submit_approve_from_inbox_and_from_the_workflow_page(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url

    # alice submits an expense through the form built from the schema, in rupees
    alice = sign_in(browser, base, "alice")
    alice.get_by_role("link", name="New request").click()
    alice.get_by_role("link", name="Expense claim").click()
    alice.get_by_label("Amount").fill("45000.001")
    alice.get_by_label("Currency").select_option("INR")
    alice.get_by_label("What was it for?").fill("Conference travel")
    alice.get_by_label("Reference").fill("E-2026-001")
    alice.get_by_role("button", name="Submit").click()
    # field-level errors, listed at the top too, what was typed kept
    errors = alice.locator(".field p.error")
    expect(
        errors.filter(has_text="Enter at most 2 digits after the decimal point.")
    ).to_be_visible()
    expect(errors.filter(has_text="This field is required.")).to_be_visible()
    expect(alice.locator("#error-summary")).to_contain_text(
        "Amount: Enter at most 2 digits after the decimal point."
    )
    expect(alice.get_by_label("What was it for?")).to_have_value("Conference travel")
    shot(alice, "new-request-errors")
    assert not Workflow.objects.exists()
    alice.get_by_label("Amount").fill("45000.00")
    alice.get_by_label("Department").select_option(label="Engineering")
    shot(alice, "new-request")
    alice.get_by_role("button", name="Submit").click()
    expect(alice.locator(".status")).to_have_text("Waiting: Manager")
    expect(alice.locator(".status-sentence")).to_contain_text("Waiting for Bob (Manager) since")
    expect(alice.locator("dl.data")).to_contain_text("₹45,000.00")
    wf = Workflow.objects.get(subject_id="E-2026-001")
    assert wf.data["amountPaise"] == 4_500_000
    expect(alice.locator('svg.diagram [data-step="manager"]')).to_have_class("node step current")
    shot(alice, "workflow-running")

    # bob approves from his inbox: no navigation, the row leaves, the page says so
    bob = sign_in(browser, base, "bob")
    row = bob.locator(f'li[data-workflow="{wf.pk}"]')
    expect(row).to_contain_text("E-2026-001")
    expect(row).to_contain_text("₹45,000.00")
    expect(row).to_contain_text("from Alice")
    expect(row).to_contain_text("Manager step")
    shot(bob, "inbox")
    navigations: list[str] = []
    bob.on("framenavigated", lambda frame: navigations.append(frame.url))
    bob.clock.install()  # the Undo window is moved past, not waited for
    row.locator('textarea[id^="comment-"]').fill("OK, within budget")
    row.get_by_role("button", name="Approve").click()
    bob.clock.run_for(UNDO_PASSED)
    expect(bob.locator("#inbox-status")).to_contain_text("Approved Expense claim E-2026-001")
    expect(bob.locator(f'li[data-workflow="{wf.pk}"]')).to_have_count(0)
    assert navigations == []

    # fiona approves from the workflow page; the history tells the story in sentences
    fiona = sign_in(browser, base, "fiona")
    fiona.goto(f"{base}/workflows/{wf.pk}")
    fiona.get_by_role("button", name="Approve").click()
    expect(fiona.locator(".status")).to_have_text("Approved")
    assert WorkflowEvent.objects.filter(workflow=wf, type="DecisionRecorded").count() == 2

    alice.goto(f"{base}/workflows/{wf.pk}")
    expect(alice.locator(".status")).to_have_attribute("data-status", "APPROVED")
    history = alice.locator(".timeline")
    expect(history).to_contain_text("Alice submitted the request")
    expect(history).to_contain_text("Bob approved the Manager step: “OK, within budget”")
    expect(history).to_contain_text(
        "The VP step was skipped: the condition amount > ₹1,00,000.00 did not hold"
    )
    expect(history).to_contain_text("Fiona approved the Finance step")
    expect(history).to_contain_text("The request was approved")
    diagram = alice.locator("svg.diagram")
    expect(diagram).to_be_visible()
    expect(diagram.locator('[data-step="vp"]')).to_have_class("node step skipped")
    expect(diagram).to_contain_text("if amount > ₹1,00,000.00")
    shot(alice, "workflow")
    alice.set_viewport_size({"width": 380, "height": 800})
    shot(alice, "workflow-narrow")


def test_a_real_double_click_on_approve_records_one_decision(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    from approvals.services.workflows import workflow_start

    started = workflow_start(
        submitter=acme.users.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-dbl",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    wid = str(started.workflow_id)
    bob = sign_in(browser, live_server.url, "bob")
    row = bob.locator(f'li[data-workflow="{wid}"]')
    bob.clock.install()
    row.get_by_role("button", name="Approve").dblclick()
    bob.clock.run_for(UNDO_PASSED)
    expect(bob.locator(f'li[data-workflow="{wid}"]')).to_have_count(0)
    expect(bob.locator("#inbox-status")).to_contain_text("Approved")
    bob.wait_for_timeout(500)
    assert WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").count() == 1


def test_bob_sends_back_and_alice_edits_and_resubmits(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    from approvals.services.workflows import workflow_start

    base = live_server.url
    started = workflow_start(
        submitter=acme.users.get(username="alice"),
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-back",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    wid = str(started.workflow_id)
    bob = sign_in(browser, base, "bob")
    row = bob.locator(f'li[data-workflow="{wid}"]')
    bob.clock.install()
    row.locator('textarea[id^="comment-"]').fill("Attach the receipt total")
    row.get_by_role("button", name="Send back").click()
    bob.clock.run_for(UNDO_PASSED)
    expect(bob.locator("#inbox-status")).to_contain_text("Sent Expense claim E-back back to Alice")

    alice = sign_in(browser, base, "alice")
    alice.get_by_role("link", name="My requests").click()
    alice.get_by_role("link", name="Sent back: edit and resubmit").click()
    expect(alice.locator(".status-sentence")).to_contain_text("Sent back to Alice for changes")
    shot(alice, "resubmit")
    alice.get_by_label("Amount").fill("44,500.50")
    alice.get_by_label("What did you change?").fill("Corrected the total")
    alice.get_by_role("button", name="Resubmit").click()
    expect(alice.locator(".flash.success")).to_contain_text("Resubmitted")
    assert Workflow.objects.get(pk=wid).data["amountPaise"] == 4_450_050
    history = alice.locator(".timeline")
    expect(history).to_contain_text(
        "Bob sent the request back to Alice from the Manager step: “Attach the receipt total”"
    )
    expect(history).to_contain_text("Alice changed the request and resubmitted it")
    expect(history.locator('li[data-kind="ApprovalRequested"]')).to_have_count(2)
    expect(alice.locator("dl.data")).to_contain_text("₹44,500.50")


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
    form = bob.locator(f'li[data-workflow="{wid}"] form.decide').first
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


def test_approving_selected_rows_at_once_by_keyboard_and_the_other_pages(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    from approvals.services.workflows import workflow_start

    base = live_server.url
    alice_user = acme.users.get(username="alice")
    wids = [
        str(
            workflow_start(
                submitter=alice_user,
                template_key="expense-approval",
                subject_type="expense",
                subject_id=f"E-bulk-{i}",
                data={"amountPaise": 4_500_000 + i * 100, "currency": "INR", "department": "eng"},
            ).workflow_id
        )
        for i in range(3)
    ]
    bob = sign_in(browser, base, "bob")
    for wid in wids[:2]:
        bob.locator(f'li[data-workflow="{wid}"] input.select').focus()
        bob.keyboard.press("Space")
    bob.get_by_role("button", name="Approve selected").focus()
    bob.keyboard.press("Enter")
    expect(bob.locator("#confirm-decision")).to_contain_text(
        "Approve 2 requests, ₹90,001.00 in all?"
    )
    bob.keyboard.press("Shift+Tab")  # from "Keep it" (focused first) to the approval
    bob.keyboard.press("Enter")
    expect(bob.locator("#inbox-status")).to_contain_text("Approved Expense claim E-bulk-")
    expect(bob.locator("li.task")).to_have_count(1)
    expect(bob.locator(f'li[data-workflow="{wids[2]}"]')).to_have_count(1)
    approvals = WorkflowEvent.objects.filter(workflow_id__in=wids, type="DecisionRecorded")
    assert sorted(str(e.workflow_id) for e in approvals) == sorted(wids[:2])
    # each with its own request id
    assert len({e.request_id for e in approvals}) == 2

    bob.set_viewport_size({"width": 380, "height": 800})
    shot(bob, "inbox-narrow")
    bob.set_viewport_size({"width": 1280, "height": 800})

    bob.get_by_role("link", name="Search").click()
    bob.get_by_label("Words").fill("E-bulk")
    bob.get_by_label("Status").select_option("RUNNING")
    bob.get_by_role("button", name="Search").click()
    expect(bob.locator("table.tasks tbody tr")).to_have_count(3)
    expect(bob.locator("table.tasks")).to_contain_text("Waiting: Finance")
    expect(bob.locator("table.tasks")).to_contain_text("Waiting: Manager")
    shot(bob, "search")

    bob.get_by_role("link", name="Out of office").click()
    bob.get_by_label("Who decides for you").fill("ivan")
    bob.get_by_label("First day away").fill("2026-12-01")
    bob.get_by_label("Last day away").fill("2026-12-05")
    bob.get_by_role("button", name="Save").click()
    expect(bob.locator(".flash.success")).to_contain_text("Ivan decides your tasks")
    shot(bob, "out-of-office")
