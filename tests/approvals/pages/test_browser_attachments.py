"""A receipt in a real headless Chromium: alice attaches it from the workflow page, a
file named .pdf holding HTML is refused in a sentence, bob reads the timeline and
downloads the file, and ivan, who may not read the request, is not found."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.services.attachments import NOT_ACCEPTED

from ..api.test_attachments import HTML, PDF, files_root  # noqa: F401  (a fixture)
from ..browser import CHROMIUM, browser  # noqa: F401  (a fixture)
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Chromium is not installed"),
]


def test_a_receipt_attached_by_alice_is_downloaded_by_bob_and_not_found_for_ivan(
    acme: Any,
    live_server: Any,
    browser: Browser,  # noqa: F811
    files_root: Path,  # noqa: F811
) -> None:
    base = live_server.url
    wid = expense_started("E-2026-RCPT")
    url = f"{base}/workflows/{wid}"

    # alice tries a page saved as .pdf first: refused, in words, nothing recorded
    alice = sign_in(browser, base, "alice")
    alice.goto(url)
    form = alice.locator("#files form")
    form.get_by_label("Attach a receipt").set_input_files(
        {"name": "receipt.pdf", "mimeType": "application/pdf", "buffer": HTML}
    )
    form.get_by_role("button", name="Attach", exact=True).click()
    expect(alice.locator(".flash")).to_have_text(NOT_ACCEPTED)
    expect(alice.locator("#files")).to_contain_text("No files yet.")

    # then the real receipt
    form = alice.locator("#files form")
    form.get_by_label("Attach a receipt").set_input_files(
        {"name": "receipt.pdf", "mimeType": "application/pdf", "buffer": PDF}
    )
    form.get_by_role("button", name="Attach", exact=True).click()
    expect(alice.locator(".flash")).to_have_text(f"Attached receipt.pdf ({len(PDF)} bytes).")
    sentence = f"Alice attached receipt.pdf ({len(PDF)} bytes)"
    expect(alice.locator("#files")).to_contain_text(sentence)
    shot(alice, "workflow-with-file")

    # bob reads it in the timeline and downloads it
    bob = sign_in(browser, base, "bob")
    bob.goto(url)
    line = bob.locator('.timeline li[data-kind="FileAttached"]')
    expect(line).to_contain_text(sentence)
    with bob.expect_download() as caught:
        line.get_by_role("link", name="Download").click()
    download = caught.value
    assert download.suggested_filename == "receipt.pdf"
    saved = download.path()
    assert saved is not None
    assert Path(saved).read_bytes() == PDF
    shot(bob, "workflow-with-file-approver")

    # ivan (IT admins) takes no part: the file is not found
    ivan = sign_in(browser, base, "ivan")
    sha = hashlib.sha256(PDF).hexdigest()
    answer = ivan.goto(f"{url}/files/{sha}")
    assert answer is not None
    assert answer.status == 404
