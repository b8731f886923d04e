"""Decisions held by the server, in a real headless Chromium: the browser closed right
after Approve loses nothing (a real scheduler process records it, once); the request
page holds a decision behind an Undo that works as a plain form and comes back after a
reload; and while one holder's decision is held, the other holders of the task see who
is deciding and cannot decide it twice."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import HeldDecision, User, WorkflowEvent
from approvals.pages.common import UNDO_SECONDS
from approvals.services.held_decisions import held_release_due
from approvals.services.workflows import workflow_decide
from tests.approvals.durability.conftest import Processes, database_url, wait_until

from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

RECORDING_LIMIT = 90.0  # seconds the scheduler process may take to record it


def _decisions(wid: str) -> list[tuple[str, str]]:
    events = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
    return [(e.payload["actor"], e.request_id) for e in events.order_by("seq")]


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[Processes]:
    """The periodic jobs' loop as a process of its own, on this test's database."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONUNBUFFERED": "1",
    }
    procs = Processes(tmp_path, env)
    try:
        procs.scheduler(interval=0.2)
        yield procs
    finally:
        procs.stop_all()


def test_closing_the_browser_right_after_approve_records_the_decision_once(
    acme: Any, live_server: Any, browser: Browser, scheduler: Processes, settings: Any
) -> None:
    settings.APPROVALS_UNDO_SECONDS = 2  # waited for in real time by the scheduler
    wid = expense_started("E-closed")
    bob = sign_in(browser, live_server.url, "bob")

    bob.locator(f'li[data-workflow="{wid}"]').get_by_role("button", name="Approve").click()
    expect(bob.locator(".held")).to_contain_text("Approved Expense claim E-closed")
    bob.context.close()  # the tab, the browser, the connection: all gone

    hold = HeldDecision.objects.get(workflow_id=wid)
    wait_until(lambda: _decisions(wid), timeout=RECORDING_LIMIT, what="the held decision")
    hold.refresh_from_db()
    assert hold.recorded_at is not None
    assert _decisions(wid) == [("bob", hold.request_id)]
    assert held_release_due() == 0  # nothing left to record twice


def test_the_request_page_holds_a_decision_behind_an_undo(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    base = live_server.url
    wid = expense_started("E-page")
    bob = sign_in(browser, base, "bob")
    bob.goto(f"{base}/workflows/{wid}")

    bob.get_by_role("button", name="Approve").click()
    held = bob.locator(".held")
    expect(held).to_contain_text("Approved Expense claim E-page. It is recorded in")
    expect(bob.locator("form.decide")).to_be_hidden()
    bob.reload()  # the server still holds it, and shows the Undo again
    expect(held.get_by_role("button", name="Undo")).to_be_visible()
    shot(bob, "request-page-held")
    bob.set_viewport_size({"width": 390, "height": 800})
    shot(bob, "request-page-held-narrow")
    bob.set_viewport_size({"width": 1280, "height": 800})
    held.get_by_role("button", name="Undo").click()

    expect(bob.locator(".flash.success")).to_have_text(
        "Undone: nothing was recorded for Expense claim E-page."
    )
    expect(bob.get_by_role("button", name="Approve")).to_be_visible()
    assert held_release_due() == 0
    assert _decisions(wid) == []


def test_other_holders_see_it_being_decided_and_cannot_decide_it_twice(
    acme: Any, live_server: Any, browser: Browser, server_clock: Callable[[float], None]
) -> None:
    base = live_server.url
    wid = expense_started("E-two")
    bob = User.objects.get(username="bob")
    workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="two-0")
    fiona = sign_in(browser, base, "fiona")  # both hold the Finance step
    farah = sign_in(browser, base, "farah")
    fiona_row = fiona.locator(f'li[data-workflow="{wid}"]')
    farah_row = farah.locator(f'li[data-workflow="{wid}"]')

    fiona_row.get_by_role("button", name="Approve").click()
    expect(fiona.locator(".held")).to_contain_text("Approved Expense claim E-two")
    farah_row.get_by_role("button", name="Approve").click()  # her page is older

    deciding = "Fiona is deciding: approves in a few seconds."
    expect(farah.locator("#inbox-status")).to_contain_text(deciding)
    farah.reload()
    expect(farah_row.locator(".deciding")).to_have_text(deciding)
    expect(farah_row.get_by_role("button", name="Approve")).to_have_count(0)
    shot(farah, "inbox-being-decided")
    farah.set_viewport_size({"width": 390, "height": 800})
    shot(farah, "inbox-being-decided-narrow")
    farah.goto(f"{base}/workflows/{wid}")
    expect(farah.locator(".deciding")).to_have_text(deciding)
    expect(farah.get_by_role("button", name="Approve")).to_have_count(0)
    shot(farah, "request-page-being-decided-narrow")
    fiona.reload()  # her own Undo, again
    expect(fiona_row.get_by_role("button", name="Undo")).to_be_visible()
    fiona.set_viewport_size({"width": 390, "height": 800})
    shot(fiona, "inbox-held-narrow")

    server_clock(UNDO_SECONDS + 1)
    assert held_release_due() == 1
    decided = _decisions(wid)
    assert [who for who, _ in decided] == ["bob", "fiona"]
