"""The Content-Security-Policy breaks neither the Swagger UI nor the admin: both render
in a real headless Chromium with no policy violation reported."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def _page_with_violations(browser: Any) -> tuple[Any, list[str]]:
    page = browser.new_context().new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    return page, violations


def test_swagger_ui_renders_under_the_policy(acme: Any, live_server: Any, browser: Any) -> None:
    from playwright.sync_api import expect

    page, violations = _page_with_violations(browser)
    page.goto(f"{live_server.url}/api/docs/")

    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Approvals API")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    assert violations == []


def test_admin_and_sign_in_render_under_the_policy(
    acme: Any, live_server: Any, browser: Any
) -> None:
    from playwright.sync_api import expect

    page, violations = _page_with_violations(browser)
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()
    page.goto(f"{live_server.url}/admin/approvals/workflowtemplate/add/")
    # the structured editor of workflow templates (django-jsonform) draws its form
    expect(page.locator(".django-jsonform-container input").first).to_be_visible()
    page.goto(f"{live_server.url}/accounts/login/")

    assert violations == []
