"""The organisation admin's pages in a real headless Chromium: what needs attention,
in words and oldest first, and dealing with a failed roll-back from it."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from approvals import clock
from approvals.admin.operation_pages import KIND_WORDS
from approvals.models import ActivityAttempt, Timer, User, Workflow
from approvals.selectors.attention import attention_list

from .test_admin_operations import DOWN, run_attempts, start

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

SHOTS = Path(os.environ.get("APPROVALS_SHOTS", "/tmp/shots-ops"))


def shot(page: Page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def admin_sign_in(browser: Browser, base: str, username: str) -> Page:
    page = browser.new_context().new_page()
    page.goto(f"{base}/admin/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Log in").click()
    return page


def test_olga_settles_a_failed_roll_back_from_the_attention_page(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    # given: a roll-back that failed, an automated step failing, a parked timer and,
    # two days on, overdue tasks
    DOWN.update({"ops_book", "ops_release"})
    stuck = start(acme, 1)
    assert run_attempts(stuck) == "COMPENSATION_FAILED"
    DOWN.clear()
    parked = start(acme, 2)
    run_attempts(parked)
    Timer.objects.filter(workflow_id=parked, kind="deadline").update(
        dead_at=clock.now(), failures=10, last_error="OperationalError: connection lost"
    )
    DOWN.add("ops_book")
    failing = start(acme, 3)
    first = ActivityAttempt.objects.get(workflow_id=failing, step="reserve")
    from approvals.workers.activities import attempt_run

    attempt_run(attempt_id=first.pk)
    book = ActivityAttempt.objects.get(workflow_id=failing, step="book", attempt=1)
    attempt_run(attempt_id=book.pk)
    DOWN.clear()

    with clock.shifted(dt.timedelta(days=2)):
        olga = admin_sign_in(browser, live_server.url, "olga")
        olga.goto(f"{live_server.url}/admin/approvals/workflow/")
        shot(olga, "admin-workflow-list")
        olga.get_by_role("link", name="What needs attention").click()

        # then: each in words, the oldest first
        table = olga.locator("#attention")
        expect(table).to_contain_text("Roll-back failed")
        expect(table).to_contain_text("Undoing the Reserve step failed")
        expect(table).to_contain_text("Timer stopped")
        expect(table).to_contain_text("could not be delivered after 10 tries")
        expect(table).to_contain_text("Automated step failing")
        expect(table).to_contain_text("Running ops book for the Book step has failed 1 time")
        expect(table).to_contain_text("Task overdue")
        expect(table).to_contain_text("Vendor booking B-1")
        assert "COMPENSATION_FAILED" not in table.inner_text()
        items = attention_list(user=User.objects.get(username="olga"))
        assert [i.since for i in items] == sorted(i.since for i in items)
        kinds = table.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert kinds == [KIND_WORDS[i.kind] for i in items]
        shot(olga, "admin-attention")

        # when: olga deals with the failed roll-back
        row = table.locator("tbody tr", has_text="Roll-back failed")
        row.get_by_role("link", name="Deal with it").click()
        expect(
            olga.get_by_role("heading", name="Mark the roll-back as done by hand")
        ).to_be_visible()
        shot(olga, "admin-operations")
        form = olga.locator("#op-resolve")
        form.get_by_label("Reason").fill("Released the budget in the ERP by hand")
        form.get_by_role("button", name="Mark the roll-back as done by hand").click()
        # it cannot be taken back, so the page asks first
        dialog = olga.get_by_role("dialog")
        expect(dialog).to_contain_text(
            "Mark the roll-back of Vendor booking B-1 as done by hand? No undo is tried again"
        )
        dialog.get_by_role("button", name="Mark the roll-back as done by hand").click()

        # then
        expect(olga.get_by_text("The roll-back was marked as done by hand.")).to_be_visible()
        # settled: the request stays a failed roll-back, and nothing is left to do
        expect(olga.get_by_text("Nothing can be done to this request")).to_be_visible()
        expect(olga.locator("#op-resolve")).to_have_count(0)
        shot(olga, "admin-operations-done")
        assert Workflow.objects.get(pk=stuck).status == "COMPENSATION_FAILED"
        olga.goto(f"{live_server.url}/admin/approvals/workflow/attention/")
        expect(olga.locator("#attention")).not_to_contain_text("Roll-back failed")

        olga.goto(f"{live_server.url}/admin/approvals/workflow/{parked}/change/")
        expect(olga.get_by_role("link", name="What can be done")).to_be_visible()
        shot(olga, "admin-workflow-change")


def test_a_superuser_deactivates_someone_from_the_user_list(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    wid = start(acme, 9)
    run_attempts(wid)  # waits for bob
    admin = admin_sign_in(browser, live_server.url, "admin")
    admin.goto(f"{live_server.url}/admin/approvals/tenant/")
    shot(admin, "admin-tenants")

    admin.goto(f"{live_server.url}/admin/approvals/user/")
    admin.locator("tr", has_text="bob@acme.example").locator("input.action-select").check()
    admin.locator("select[name=action]").select_option("deactivate")
    admin.get_by_role("button", name="Go").click()

    expect(admin.get_by_text("Deactivated bob; 1 open task handed on to victor.")).to_be_visible()
    shot(admin, "admin-users-deactivated")
    assert not User.objects.get(username="bob").is_active


def test_olga_starts_a_rolled_back_request_again_and_each_page_links_the_other(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    # given: a booking rolled back after its Book step failed for good
    DOWN.add("ops_book")
    rolled = start(acme, 1)
    assert run_attempts(rolled) == "ROLLED_BACK"
    DOWN.clear()

    # when: olga starts it again from its operations page
    olga = admin_sign_in(browser, live_server.url, "olga")
    olga.goto(f"{live_server.url}/admin/approvals/workflow/{rolled}/operations/")
    form = olga.locator("#op-retry_step")
    form.get_by_label("Reason").fill("The booking system is back")
    form.get_by_role("button", name="Start it again as a new request").click()
    # it cannot be taken back, so the page asks first
    dialog = olga.get_by_role("dialog")
    expect(dialog).to_contain_text(
        "Start Vendor booking B-1 again as a new request? This one stays rolled back for good."
    )
    dialog.get_by_role("button", name="Start it again as a new request").click()
    expect(olga.get_by_text("The request was started again as a new request.")).to_be_visible()
    expect(olga.get_by_text("It has since been started again as a new request")).to_be_visible()
    shot(olga, "admin-operations-restarted")

    # then: the old request stays rolled back and links to the new one, which links back
    assert Workflow.objects.get(pk=rolled).status == "ROLLED_BACK"
    olga.goto(f"{live_server.url}/workflows/{rolled}")
    expect(olga.get_by_text("Could not be completed").first).to_be_visible()
    olga.get_by_role("link", name="a new request").click()
    expect(olga.get_by_text("This request was started in place of")).to_be_visible()
    expect(olga.get_by_text("Olga started this again for Alice")).to_be_visible()
    shot(olga, "workflow-restarted")
    olga.get_by_role("link", name="one that could not be completed").click()
    assert olga.url.endswith(f"/workflows/{rolled}")
