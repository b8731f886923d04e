"""The pages this part of the product changed, in a real headless Chromium at 1280 and
390 px wide, none wider than the screen: the start form's department as a choice of the
organisation's list; the admin's list of departments; an admin cancel asked first on a
page of its own when the script is off ("Keep it" focused), and in the dialog when on;
and the step editor: the template's own fields in words, folding in words (never "[-]"
or "[+]"), and the step cards' approver box found by name."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from approvals.models import Workflow, WorkflowStatus, WorkflowTemplate

from .a11y import assert_accessible
from .helpers import EXPENSE, start_expense
from .pages.test_browser import shot, sign_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

WIDTHS = (1280, 390)


def _fits(page: Page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1


def _admin(browser: Any, base: str, username: str, *, script: bool = True) -> Page:
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, java_script_enabled=script
    )
    page = context.new_page()
    page.goto(f"{base}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    return page


def test_the_start_form_offers_the_organisations_departments(
    acme: Any, live_server: Any, browser: Any
) -> None:
    alice = sign_in(browser, live_server.url, "alice")
    alice.goto(f"{live_server.url}/workflows/new?template={EXPENSE}")

    department = alice.get_by_label("Department")
    labels = department.locator("option").all_inner_texts()
    assert labels[0] == "Choose a department"
    assert {"Engineering", "Finance", "Sales", "Operations"} <= set(labels)
    department.select_option(label="Operations")
    expect(department).to_have_value("ops")
    for width in WIDTHS:
        _fits(alice, width)
        shot(alice, f"start-departments-{width}")
    assert_accessible(alice, "the start form")


def test_the_admin_keeps_the_departments(acme: Any, live_server: Any, browser: Any) -> None:
    olga = _admin(browser, live_server.url, "olga")
    olga.goto(f"{live_server.url}/admin/approvals/department/add/")
    olga.get_by_label("Name").fill("Legal")
    olga.get_by_label("Key").fill("legal")
    olga.locator("input[name=_save]").click()
    expect(olga.locator("#result_list")).to_contain_text("Legal")
    for width in WIDTHS:
        _fits(olga, width)
        shot(olga, f"admin-departments-{width}")


def test_an_admin_cancel_asks_first_without_the_script_and_with_it(
    acme: Any, live_server: Any, browser: Any, api: Any
) -> None:
    wid = start_expense(api("alice"), 4_500_000, subject="E-SURE").json()["workflowId"]
    url = f"{live_server.url}/admin/approvals/workflow/{wid}/operations/"

    # without the script: a page of its own asks, naming what happens, Keep it focused
    plain = _admin(browser, live_server.url, "olga", script=False)
    plain.goto(url)
    plain.locator("#id_cancel-reason").fill("Submitted twice")
    plain.locator("#op-cancel input[type=submit]").click()
    expect(plain.locator("#consequence")).to_contain_text(
        "Cancel Expense claim E-SURE? Its completed steps are undone and it ends for good."
    )
    expect(plain.locator("#keep-it")).to_be_focused()
    assert Workflow.objects.get(pk=wid).status == WorkflowStatus.RUNNING
    for width in WIDTHS:
        _fits(plain, width)
        shot(plain, f"admin-confirm-page-{width}")
    plain.set_viewport_size({"width": 1280, "height": 900})
    plain.get_by_role("link", name="Keep it: change nothing").click()
    assert Workflow.objects.get(pk=wid).status == WorkflowStatus.RUNNING

    # with it: the dialog asks; "Keep it" first, then the cancel
    page = _admin(browser, live_server.url, "olga")
    page.goto(url)
    page.locator("#id_cancel-reason").fill("Submitted twice")
    page.locator("#op-cancel input[type=submit]").click()
    expect(page.locator("#confirm-no")).to_be_focused()
    page.locator("#confirm-no").click()
    assert Workflow.objects.get(pk=wid).status == WorkflowStatus.RUNNING
    page.locator("#op-cancel input[type=submit]").click()
    page.locator("#confirm-yes").click()
    expect(page.locator(".messagelist")).to_contain_text("Cancelled by Olga")
    assert Workflow.objects.get(pk=wid).status == WorkflowStatus.CANCELLED


def test_the_step_cards_approver_box_at_both_widths(
    acme: Any, live_server: Any, browser: Any
) -> None:
    v1 = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    fiona = _admin(browser, live_server.url, "fiona")
    fiona.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{v1.pk}/change/")
    # the template's own fields say what they are, and folding says so in words
    expect(fiona.get_by_label("Short name")).to_have_value(EXPENSE)
    expect(fiona.get_by_label("Name people see")).to_have_value("Expense claim")
    show = fiona.get_by_role("button", name="Show Data fields")
    expect(show).to_be_visible()
    words = show.evaluate("b => getComputedStyle(b, '::after').content")
    assert words == '"Show"'
    show.click()
    expect(fiona.get_by_role("button", name="Hide Data fields")).to_be_visible()
    fiona.get_by_role("button", name="Hide Data fields").click()
    expect(fiona.get_by_role("button", name="Show Data fields")).to_be_visible()
    box = fiona.locator("#step-1-approver-0")
    expect(box).to_have_value("Victor")
    box.fill("Cor")
    expect(fiona.locator("#step-1-approver-0-choices option[value='cora']")).to_have_count(1)
    for width in WIDTHS:
        _fits(fiona, width)
        fiona.locator("#step-cards").screenshot(path=_shot_path(f"editor-approver-box-{width}"))
        fiona.locator("#content-main").screenshot(path=_shot_path(f"editor-header-{width}"))


def _shot_path(name: str) -> str:
    from .pages.test_browser import SHOTS

    SHOTS.mkdir(exist_ok=True)
    return str(SHOTS / f"{name}.png")
