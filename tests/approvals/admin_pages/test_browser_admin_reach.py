"""Every admin page a finance admin (fiona), an organisation admin (olga) and an auditor
(audrey) reach from their admin home, and the pages beyond it that each of them opens
(the version-compare page, the Verify verdict, a populated attention table), plus the
admin's sign-in page, in a real headless Chromium: each opens, axe-core finds nothing
on it (WCAG 2.1 A and AA, and axe's best practices: one h1, allowed roles, header cells
with text), and at 390 px wide none runs past the screen's edge."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from approvals.models import WorkflowTemplate

from ..a11y import describe, violations
from ..browser import linked_pages
from .test_browser_admin_words import admin_page
from .test_browser_admin_words import requests as requests  # the fixture: three expenses

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]

# where a link leaves the admin pages to check, or does something on a GET
SKIP = ("/admin/logout/", "/admin/jsi18n/")
PHONE = 390


def _beyond_home(username: str) -> list[str]:
    """Pages a role opens from a page of its admin rather than from home."""
    if username == "fiona":
        expense = WorkflowTemplate.objects.filter(key="expense-approval").order_by("-version")
        newest = expense.first()
        assert newest is not None
        return [f"/admin/approvals/workflowtemplate/{newest.pk}/diff/?a=1&b={newest.version}"]
    if username == "audrey":
        return ["/audit/verify?scope=organisation"]
    return []


def _overflow(page: Page) -> int:
    """How far the page runs past the window's right edge, in CSS pixels."""
    return int(
        page.evaluate(
            "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - window.innerWidth"
        )
    )


def _problems(page: Page, base: str, urls: list[str]) -> list[str]:
    found: list[str] = []
    for url in urls:
        response = page.goto(f"{base}{url}")
        assert response is not None and response.status == 200, (url, response)
        problems = violations(page, best_practice=True)
        if problems:
            found.append(f"{url}:\n{describe(problems)}")
    return found


@pytest.mark.parametrize("username", ["fiona", "olga", "audrey"])
def test_every_admin_page_a_role_reaches_from_home_is_accessible(
    requests: dict[str, str], live_server: Any, browser: Browser, username: str
) -> None:
    page = admin_page(browser, live_server.url, username)
    urls = linked_pages(page, live_server.url, under="/admin/", skip=SKIP)
    assert len(urls) >= 3, urls
    if username == "olga":
        assert "/admin/approvals/workflow/attention/" in urls  # with the overdue rows
    found = _problems(page, live_server.url, [*urls, *_beyond_home(username)])
    assert not found, f"{username}'s admin pages:\n" + "\n".join(found)


def test_the_admin_sign_in_page_is_accessible(live_server: Any, browser: Browser) -> None:
    page = browser.new_context().new_page()
    found = _problems(page, live_server.url, ["/admin/login/"])
    assert not found, "\n".join(found)


@pytest.mark.parametrize("username", ["fiona", "olga", "audrey"])
def test_no_admin_page_a_role_reaches_runs_past_a_phones_edge(
    requests: dict[str, str], live_server: Any, browser: Browser, username: str
) -> None:
    page = admin_page(browser, live_server.url, username)
    urls = [*linked_pages(page, live_server.url, under="/admin/", skip=SKIP)]
    urls += _beyond_home(username)
    page.set_viewport_size({"width": PHONE, "height": 844})
    wide = {}
    for url in urls:
        page.goto(f"{live_server.url}{url}")
        if (past := _overflow(page)) > 0:
            wide[url] = past
    assert not wide, f"{username}'s pages wider than {PHONE} px (by px): {wide}"
