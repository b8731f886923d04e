"""Every admin page a finance admin (fiona), an organisation admin (olga) and an auditor
(audrey) reach from their admin home, in a real headless Chromium: each opens, reads
without codes of the engine, and axe-core finds nothing on it (WCAG 2.1 A and AA)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser

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


@pytest.mark.parametrize("username", ["fiona", "olga", "audrey"])
def test_every_admin_page_a_role_reaches_from_home_is_accessible(
    requests: dict[str, str], live_server: Any, browser: Browser, username: str
) -> None:
    page = admin_page(browser, live_server.url, username)
    urls = linked_pages(page, live_server.url, under="/admin/", skip=SKIP)
    assert len(urls) >= 3, urls
    found: list[str] = []
    for url in urls:
        response = page.goto(f"{live_server.url}{url}")
        assert response is not None and response.status == 200, (url, response)
        problems = violations(page)
        if problems:
            found.append(f"{url}:\n{describe(problems)}")
    assert not found, f"{username}'s admin pages:\n" + "\n".join(found)
