"""In a real headless Chromium: Bob sets an absence and hands what he holds to Ivan;
Ivan's inbox shows the task "for Bob" with Bob's note, he opens and approves it, and
the history says he did so on behalf of Bob. And the new-request form names the route as
it is filled in, changing when the amount crosses the VP's threshold."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals import clock
from approvals.models import PendingTask, Workflow, WorkflowEvent

from ..a11y import assert_accessible
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
    pytest.mark.usefixtures("undo_window_closed"),
]


def test_the_stand_in_decides_a_task_handed_over_for_bob(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    # given alice's expense waits for bob
    wid = expense_started("OOO-1")

    # when bob sets his absence with Ivan standing in, and hands over what he holds
    bob = sign_in(browser, live_server.url, "bob")
    bob.get_by_role("link", name="Out of office").click()
    assert_accessible(bob, "the out-of-office page")
    today = clock.now().date()
    bob.get_by_label("Who decides for you").fill("ivan")
    bob.get_by_label("First day away").fill((today - dt.timedelta(days=1)).isoformat())
    bob.get_by_label("Last day away").fill((today + dt.timedelta(days=3)).isoformat())
    bob.get_by_label("Note (optional)").fill("At the Pune offsite")
    bob.get_by_label("Also hand over the tasks I hold now").check()
    bob.get_by_role("button", name="Save").click()
    expect(bob.locator(".flash").filter(has_text="1 task handed to Ivan")).to_be_visible()
    assert list(PendingTask.objects.values_list("assignee__username", "on_behalf_of")) == [
        ("ivan", "bob")
    ]
    shot(bob, "out-of-office-handed-over")

    # then ivan's inbox shows it for Bob, with Bob's note; he opens it and approves
    ivan = sign_in(browser, live_server.url, "ivan")
    row = ivan.locator("li.task", has_text="OOO-1")
    expect(row.locator(".behalf")).to_have_text("for Bob")
    expect(row.locator(".handover-note")).to_have_text("Bob's note: At the Pune offsite")
    shot(ivan, "inbox-for-bob")
    row.get_by_role("link", name="Expense claim OOO-1").click()
    expect(ivan.get_by_role("heading", name="Your decision for Bob")).to_be_visible()
    ivan.get_by_text("Hand to a colleague").click()  # the hand-over with a note, opened
    expect(ivan.get_by_label("Note for them (optional)")).to_be_visible()
    shot(ivan, "request-page-for-bob")
    ivan.get_by_role("button", name="Approve", exact=True).click()
    expect(ivan.locator(".flash.success")).to_contain_text("Approved Expense claim OOO-1")

    # and the history says ivan approved on behalf of bob, once (the page shows it once
    # the server has recorded the decision it held)
    timeline = ivan.locator("ol.timeline")
    expect(timeline).to_contain_text("Ivan approved the Manager step on behalf of Bob")
    expect(timeline).to_contain_text("Bob handed the Manager step to Ivan")
    expect(timeline).to_contain_text("At the Pune offsite")
    decided = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
    assert [(e.payload["actor"], e.payload["on_behalf_of"]) for e in decided] == [("ivan", "bob")]
    assert_accessible(ivan, "the request page")
    shot(ivan, "history-on-behalf-of-bob")


def test_the_new_request_form_names_the_route_and_follows_the_amount(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    alice = sign_in(browser, live_server.url, "alice")
    alice.get_by_role("link", name="New request").click()
    alice.get_by_role("link", name="Expense claim").click()
    preview = alice.locator("#route-preview .route")

    alice.get_by_label("Currency").select_option("INR")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Amount").fill("45000")
    expect(preview).to_contain_text("It will go to Bob (your manager), then Finance")
    expect(preview).to_contain_text("Victor too if the amount is above")
    assert_accessible(alice, "the new-request page")
    shot(alice, "new-request-route")

    # past ₹1,00,000 the VP is on the route itself
    alice.get_by_label("Amount").fill("150000")
    expect(preview).to_contain_text("Bob (your manager), then Victor, then Finance")
    expect(preview).not_to_contain_text("too if")
    shot(alice, "new-request-route-above-threshold")
    assert not Workflow.objects.exists()  # asking wrote nothing
