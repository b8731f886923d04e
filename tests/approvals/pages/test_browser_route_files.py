"""In a real headless Chromium: the new-request form's route preview asks with the form's
words only; a file chosen for the request is never copied into its query string (it
would read "[object File]" there)."""

from __future__ import annotations

import urllib.parse
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from .test_browser import sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_a_chosen_file_is_not_asked_about_by_the_route_preview(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    alice = sign_in(browser, live_server.url, "alice")
    alice.get_by_role("link", name="New request").click()
    alice.get_by_role("link", name="Expense claim").click()
    asked: list[str] = []
    alice.on("request", lambda r: asked.append(r.url) if "/workflows/new/route" in r.url else None)

    alice.locator("#new-file").set_input_files(
        {"name": "receipt.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4\n%%EOF\n"}
    )
    alice.get_by_label("Currency").select_option("INR")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Amount").fill("45000")
    expect(alice.locator("#route-preview .route")).to_contain_text("It will go to Bob")

    assert asked, "the preview asked nothing"
    assert alice.locator("#new-file").get_attribute("name") == "file"
    queries = [urllib.parse.parse_qs(urllib.parse.urlsplit(url).query) for url in asked]
    for query in queries:
        assert "file" not in query, query
        assert not any("object" in v for values in query.values() for v in values), query
    # the form's own words were asked about
    assert any("45000" in values for query in queries for values in query.values()), queries
