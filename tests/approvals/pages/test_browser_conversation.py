"""The conversation in a real headless Chromium: alice asks a question on her waiting
request, bob answers mentioning her, both read in the timeline as sentences; and alice
withdraws another waiting request with a reason."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import Workflow
from approvals.notifications.models import MailMessage

from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_a_question_and_an_answer_read_in_the_timeline(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = expense_started("E-TALK")

    # alice asks on her own request
    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/{wid}")
    alice.get_by_label("Add a comment").fill("Do you need the hotel's GST number?")
    alice.get_by_role("button", name="Comment").click()
    expect(alice.locator(".flash.success")).to_contain_text("Your comment was added")
    last = alice.locator("ol.timeline li").last
    expect(last).to_contain_text("Alice asked: “Do you need the hotel's GST number?”")

    # bob answers, mentioning her
    bob = sign_in(browser, base, "bob")
    bob.goto(f"{base}/workflows/{wid}")
    bob.get_by_label("Add a comment").fill("@alice yes please, with the bill.")
    bob.get_by_role("button", name="Comment").click()
    last = bob.locator("ol.timeline li").last
    expect(last).to_contain_text("Bob wrote to Alice: “@alice yes please, with the bill.”")
    assert MailMessage.objects.filter(
        workflow_id=wid, kind="mentioned", recipient__username="alice"
    ).exists()
    shot(bob, "workflow-timeline-with-comments")

    # a mention of someone who cannot see the request: refused, the text kept
    bob.get_by_label("Add a comment").fill("@ivan can you look?")
    bob.get_by_role("button", name="Comment").click()
    expect(bob.locator("#comment-error")).to_have_text(
        "Ivan cannot see this request, so the comment cannot mention Ivan; nothing was recorded."
    )
    expect(bob.get_by_label("Add a comment")).to_have_value("@ivan can you look?")
    expect(bob.locator("ol.timeline li[data-kind=CommentAdded]")).to_have_count(2)


def test_the_submitter_withdraws_a_waiting_request_from_its_page(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = expense_started("E-WITHDRAW")
    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/{wid}")

    # no reason: refused
    alice.get_by_role("button", name="Withdraw").click()
    expect(alice.locator("#withdraw-error")).to_contain_text("Say why you are withdrawing")

    alice.get_by_label("Why are you withdrawing it?").fill("Booked twice by mistake")
    alice.get_by_role("button", name="Withdraw").click()
    alice.locator("#confirm-decision").get_by_role("button", name="Withdraw").click()
    expect(alice.locator(".flash.success")).to_contain_text("You withdrew")
    expect(alice.locator("ol.timeline li").last).to_contain_text(
        "Alice withdrew the request: Booked twice by mistake"
    )
    shot(alice, "workflow-withdrawn")
    assert Workflow.objects.get(pk=wid).status == "CANCELLED"
