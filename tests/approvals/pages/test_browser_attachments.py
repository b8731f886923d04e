"""A receipt in a real headless Chromium: alice attaches it from the workflow page, a
file named .pdf holding HTML is refused in a sentence, bob reads the timeline and
downloads the file, and ivan, who may not read the request, is not found."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, FilePayload, expect

from approvals.models import Workflow
from approvals.services.attachments import NOT_ACCEPTED

from ..a11y import assert_accessible
from ..files import HTML, PDF, pdf_bytes, png_bytes
from .support import expense_started
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_a_receipt_attached_by_alice_is_downloaded_by_bob_and_not_found_for_ivan(
    acme: Any,
    live_server: Any,
    browser: Browser,  # noqa: F811
    files_root: Path,
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


def test_files_attached_at_start_are_previewed_for_bob_and_not_found_for_ivan(
    acme: Any,
    live_server: Any,
    browser: Browser,  # noqa: F811
    files_root: Path,
) -> None:
    base = live_server.url
    receipt, photo = pdf_bytes(pages=1), png_bytes((900, 600))

    # alice fills in the new request and chooses two files before submitting
    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/new?template=expense-approval")
    alice.get_by_label("Amount").fill("12000.00")
    alice.get_by_label("Currency").select_option("INR")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Reference").fill("E-2026-FILES")
    chosen: list[FilePayload] = [
        {"name": "hotel.pdf", "mimeType": "application/pdf", "buffer": receipt},
        {"name": "taxi.png", "mimeType": "image/png", "buffer": photo},
    ]
    alice.get_by_label("Receipts or quotes").set_input_files(chosen)
    shot(alice, "new-request-with-files")
    alice.get_by_role("button", name="Submit", exact=True).click()
    expect(alice.locator(".flash").last).to_contain_text("Attached 2 files: hotel.pdf")
    wf = Workflow.objects.get(subject_id="E-2026-FILES")

    # bob sees both files with their previews on the Files card, and downloads one
    bob = sign_in(browser, base, "bob")
    bob.goto(f"{base}/workflows/{wf.pk}")
    card = bob.locator("#files")
    expect(card).to_contain_text("Alice attached hotel.pdf")
    expect(card).to_contain_text("Alice attached taxi.png")
    previews = card.locator("img.preview")
    expect(previews).to_have_count(2)
    for i in range(2):
        loaded = previews.nth(i).evaluate("img => img.complete && img.naturalWidth")
        assert 0 < loaded <= 320
    expect(card.locator(".preview.none")).to_have_count(0)
    assert_accessible(bob, "the request page with files")
    shot(bob, "workflow-files-previews")
    with bob.expect_download() as caught:
        card.get_by_role("link", name="Alice attached taxi.png", exact=False).click()
    saved = caught.value.path()
    assert saved is not None and Path(saved).read_bytes() == photo

    # ivan may not read the request: its file and its preview are not found
    ivan = sign_in(browser, base, "ivan")
    sha = hashlib.sha256(photo).hexdigest()
    for path in (f"files/{sha}", f"files/{sha}/preview"):
        answer = ivan.goto(f"{base}/workflows/{wf.pk}/{path}")
        assert answer is not None and answer.status == 404
