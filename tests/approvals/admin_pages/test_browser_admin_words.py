"""The admin in people's words, in a real headless Chromium at 1280 px: the workflow
list's columns, sorting and width, the workflow view told as the request page tells it
(the stored row folded under "Technical", times in the person's zone with the offset),
and each role's home: fiona's templates, olga's attention (one row per request) and
offboarding, audrey's verification and export without the engine's tables."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from approvals.models import Delegation, PendingTask, Tenant, User, Workflow
from approvals.selectors.attention import attention_by_request, attention_list

from ..a11y import assert_accessible
from ..helpers import decide, start_expense
from ..pages.test_browser import shot

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
WIDTH = 1280


def admin_page(browser: Browser, base: str, username: str) -> Page:
    page = browser.new_context(viewport={"width": WIDTH, "height": 900}).new_page()
    page.goto(f"{base}/admin/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#content-main")).to_be_visible()
    return page


@pytest.fixture
def requests(acme: Any, api: Any) -> dict[str, str]:
    """Three of alice's expenses: a small one waiting on bob, one bob approved that
    waits on the finance group (fiona and farah), overdue, and a large one waiting on bob."""
    alice, bob = api("alice"), api("bob")
    ids = {}
    for subject, amount in (("E-SMALL", 150_000), ("E-FIN", 4_500_000), ("E-BIG", 25_000_000)):
        started = start_expense(alice, amount, subject=subject)
        assert started.status_code == 201, started.content
        ids[subject] = started.json()["workflowId"]
    assert decide(bob, ids["E-FIN"], "approve", "bob-fin").status_code == 200
    # the finance step's tasks fell due a day ago
    finance = PendingTask.objects.filter(workflow_id=ids["E-FIN"])
    assert sorted(finance.values_list("assignee__username", flat=True)) == ["farah", "fiona"]
    for task in finance:
        PendingTask.objects.filter(pk=task.pk).update(due_at=task.due_at.replace(year=2020))
    return ids


def test_the_workflow_list_reads_in_words_sorts_and_fits(
    requests: dict[str, str], live_server: Any, browser: Browser
) -> None:
    olga = admin_page(browser, live_server.url, "olga")
    olga.goto(f"{live_server.url}/admin/approvals/workflow/")
    headers = olga.locator("#result_list thead th:not(.action-checkbox-column)")
    expect(headers).to_have_text(
        ["Request", "Amount", "Status", "Waiting on", "Age", "Submitted by"]
    )
    first_column = olga.locator("#result_list tbody th.field-reference")
    expect(first_column).to_have_count(3)
    # nothing is selected for an action until she ticks it; each box names its request
    expect(olga.locator("input.action-select:checked")).to_have_count(0)
    expect(olga.get_by_label("Select Expense claim E-FIN for an action")).to_have_count(1)
    for text in first_column.all_inner_texts():
        assert text.startswith("Expense claim E-"), text
        assert not UUID.search(text), text
    fin = olga.locator("#result_list tbody tr", has_text="E-FIN")
    expect(fin.locator("td.field-amount")).to_have_text("₹45,000.00")
    expect(fin.locator("td.field-status_words")).to_have_text("Waiting: Finance")
    expect(fin.locator("td.field-waiting_on")).to_have_text("Farah, Fiona (Finance)")
    expect(fin.locator("td.field-submitted_by")).to_have_text("Alice")
    expect(fin.locator("td.field-age")).to_have_text(re.compile(r"^(just now|\d+ minutes?)$"))
    small = olga.locator("#result_list tbody tr", has_text="E-SMALL")
    expect(small.locator("td.field-waiting_on")).to_have_text("Bob (Manager)")
    body = olga.locator("#changelist").inner_text()
    assert "PENDING_" not in body and "expense-approval" not in body
    # fits 1280 px: nothing scrolls sideways
    assert olga.evaluate("document.documentElement.scrollWidth") <= WIDTH
    shot(olga, "admin-workflow-list")
    assert_accessible(olga, "the admin's workflow list")

    # sorted by amount, smallest first, then largest first
    olga.locator("#result_list thead th.column-amount").get_by_role("link", name="Amount").click()
    amounts = olga.locator("#result_list tbody td.field-amount")
    expect(amounts).to_have_text(["₹1,500.00", "₹45,000.00", "₹2,50,000.00"])
    olga.locator("#result_list thead th.column-amount").get_by_role("link", name="Amount").click()
    expect(amounts).to_have_text(["₹2,50,000.00", "₹45,000.00", "₹1,500.00"])
    # filtered by status in words
    olga.get_by_role("link", name="In progress").click()
    expect(olga.locator("#result_list tbody tr")).to_have_count(3)


def test_the_workflow_view_tells_the_request_and_folds_the_technical(
    requests: dict[str, str], live_server: Any, browser: Browser
) -> None:
    User.objects.filter(username="olga").update(time_zone="Asia/Kolkata")
    wf = Workflow.objects.get(pk=requests["E-FIN"])
    olga = admin_page(browser, live_server.url, "olga")
    olga.goto(f"{live_server.url}/admin/approvals/workflow/")
    olga.get_by_role("link", name=re.compile("^Expense claim E-FIN")).click()
    expect(olga).to_have_url(f"{live_server.url}/admin/approvals/workflow/{wf.pk}/change/")
    expect(olga.locator("h1")).to_have_text("Expense claim E-FIN")
    story = olga.locator("#story")
    expect(story.locator(".status")).to_have_text("Waiting: Finance")
    expect(story.locator(".status-sentence")).to_contain_text(
        re.compile(r"Waiting for (Fiona, Farah|Farah, Fiona) \(Finance\)")
    )
    lines = story.locator(".timeline li")
    expect(lines.first).to_contain_text("Alice")
    expect(story.locator(".timeline")).to_contain_text("Bob approved")
    expect(lines.first.locator("time")).to_contain_text("IST (UTC+05:30)")
    expect(story.locator('svg.diagram [data-step="finance"]')).to_have_class(
        re.compile(r"\bcurrent\b")
    )
    technical = olga.locator("details#technical")
    expect(technical.locator("#events")).not_to_be_visible()
    expect(olga.get_by_text("WorkflowEvent object")).to_have_count(0)
    shot(olga, "admin-workflow-view")
    assert_accessible(olga, "the admin's workflow view")
    technical.locator("summary").click()
    expect(technical.locator("#events tbody tr")).to_have_count(wf.version)
    expect(technical.locator(".field-snapshot_json")).to_contain_text('"status": "RUNNING"')
    expect(technical.locator(".field-created")).to_contain_text("(UTC+05:30)")
    expect(technical.locator("#events tbody tr").first).to_contain_text("WorkflowStarted")
    assert "WorkflowEvent object" not in olga.locator("#content").inner_text()
    # read-only: no button saves anything
    expect(olga.locator("input[name='_save'], input[name='_continue']")).to_have_count(0)
    expect(olga.locator("input[name='_addanother']")).to_have_count(0)
    shot(olga, "admin-workflow-view-technical")


def test_each_role_finds_what_they_came_for_on_the_admin_home(
    requests: dict[str, str], live_server: Any, browser: Browser
) -> None:
    olga_user = User.objects.get(username="olga")
    # one request, two people late on it: two items, one row
    assert len(attention_list(user=olga_user)) == 2
    assert len(attention_by_request(user=olga_user)) == 1

    fiona = admin_page(browser, live_server.url, "fiona")
    sections = fiona.locator("#content-main > section.home-section h2")
    expect(sections.first).to_have_text("Workflow templates")
    templates = fiona.locator("#home-templates")
    expect(templates.locator("tbody th")).to_have_text(["Expense claim", "Purchase request"])
    expect(templates.get_by_role("link", name="Add a workflow template")).to_be_visible()
    expect(fiona.locator("#home-attention, #home-audit, #home-offboarding")).to_have_count(0)
    shot(fiona, "admin-home-fiona")
    assert_accessible(fiona, "fiona's admin home")

    olga = admin_page(browser, live_server.url, "olga")
    sections = olga.locator("#content-main > section.home-section h2")
    expect(sections.first).to_have_text("What needs attention")
    expect(sections.nth(1)).to_have_text("Offboarding")
    rows = olga.locator("#home-attention tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Expense claim E-FIN")
    expect(rows.first).to_contain_text(
        re.compile(r"Waiting for (Fiona and Farah|Farah and Fiona) on the Finance step")
    )
    expect(olga.get_by_role("link", name="All that needs attention (1)")).to_be_visible()
    expect(olga.locator("#home-offboarding").get_by_role("link")).to_have_text(
        "Offboard someone who leaves"
    )
    expect(olga.locator("#home-templates")).to_have_count(0)
    shot(olga, "admin-home-olga")
    assert_accessible(olga, "olga's admin home")
    olga.get_by_role("link", name="All that needs attention (1)").click()
    expect(olga.locator("#attention tbody tr")).to_have_count(1)

    audrey = admin_page(browser, live_server.url, "audrey")
    sections = audrey.locator("#content-main > section.home-section h2")
    expect(sections).to_have_text(["Audit"])
    audit = audrey.locator("#home-audit")
    expect(audit.get_by_role("link")).to_have_text(
        ["Verify the audit trail", "Export the audit trail"]
    )
    for forbidden in ("Timers", "Activity attempts", "Add", "Offboard someone who leaves"):
        expect(audrey.get_by_role("link", name=forbidden, exact=True)).to_have_count(0)
    assert "/admin/approvals/timer/" not in audrey.content()
    assert "/admin/approvals/activityattempt/" not in audrey.content()
    shot(audrey, "admin-home-audrey")
    assert_accessible(audrey, "audrey's admin home")
    audit.get_by_role("link", name="Export the audit trail").click()
    template = audrey.get_by_label("Workflow template")
    expect(template.locator("option")).to_have_text(["Any", "Expense claim", "Purchase request"])
    status = audrey.get_by_label("Workflow status").locator("option")
    expect(status.nth(1)).not_to_have_text(re.compile("^[A-Z_]+$"))
    expect(audrey.locator("#content-main")).not_to_contain_text("expense-approval")
    expect(audrey.locator("#content-main")).not_to_contain_text("UTC, e.g.")
    assert_accessible(audrey, "the admin's export page")
    audrey.goto(f"{live_server.url}/admin/")
    audrey.locator("#home-audit").get_by_role("link", name="Verify the audit trail").click()
    expect(audrey).to_have_url(f"{live_server.url}/audit/verify")


def test_the_lists_of_tasks_timers_and_absences_lead_with_words(
    requests: dict[str, str], live_server: Any, browser: Browser
) -> None:
    now = timezone.now()
    Delegation.objects.create(
        tenant=Tenant.objects.get(slug="acme"),
        user=User.objects.get(username="bob"),
        delegate=User.objects.get(username="victor"),
        starts_at=now,
        ends_at=now + dt.timedelta(days=3),
    )
    olga = admin_page(browser, live_server.url, "olga")
    for path, first_header in (("pendingtask", "Request"), ("timer", "Request")):
        olga.goto(f"{live_server.url}/admin/approvals/{path}/")
        headers = olga.locator("#result_list thead th:not(.action-checkbox-column)")
        expect(headers.first).to_have_text(first_header)
        first_column = olga.locator("#result_list tbody tr > th")
        for text in first_column.all_inner_texts():
            assert text.startswith("Expense claim E-"), (path, text)
        body = olga.locator("#result_list").inner_text()
        assert not UUID.search(body) and "PENDING_" not in body, (path, body)
    olga.goto(f"{live_server.url}/admin/approvals/pendingtask/")
    expect(olga.locator("#result_list tbody tr", has_text="E-FIN")).to_have_count(2)
    fiona = olga.locator("#result_list tbody tr", has_text="Fiona")
    expect(fiona.locator("td.field-step_words")).to_have_text("Finance")
    expect(fiona.locator("th.field-request")).to_have_text("Expense claim E-FIN")
    shot(olga, "admin-pending-tasks")
    assert_accessible(olga, "the admin's list of open tasks")
    olga.goto(f"{live_server.url}/admin/approvals/timer/")
    expect(olga.locator("#result_list td.field-kind_words").first).to_have_text(
        re.compile(r"^(Deadline|Reminder|Escalation)")
    )

    audrey = admin_page(browser, live_server.url, "audrey")
    audrey.goto(f"{live_server.url}/admin/approvals/delegation/")
    row = audrey.locator("#result_list tbody tr").first
    expect(row.locator("th")).to_have_text("Bob")
    expect(row.locator("td.field-stand_in")).to_have_text("Victor")
    assert_accessible(audrey, "the admin's list of absences")
    # she reads it and changes nothing: no button offers to save or add
    row.locator("th a").click()
    expect(audrey.locator("input[name='_save'], input[name='_continue']")).to_have_count(0)
    expect(audrey.locator("input[name='_addanother']")).to_have_count(0)
    expect(audrey.get_by_role("link", name="Close")).to_be_visible()
    expect(audrey.locator(".breadcrumbs")).to_contain_text("Bob away, Victor stands in")
    expect(audrey.locator("#content")).not_to_contain_text("Delegation object")
