"""A draft's files in a real headless Chromium: alice saves a draft with a receipt and a
phone's HEIC photo, finds them on the draft's form (checked with axe-core), submits it,
and bob reads both on the request, the photo previewed; and the template editor's "try
it" panel names the people one may submit as."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import Draft, Workflow, WorkflowEvent, WorkflowTemplate

from ..a11y import assert_accessible
from ..admin_pages.test_browser_admin_words import admin_page
from ..files import heic_with_exif, pdf_bytes
from ..helpers import EXPENSE
from .test_browser import shot, sign_in

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
    pytest.mark.slow,
]

# An image's width once it has loaded (0 when it could not be).
LOADED_WIDTH = """img => img.complete && img.naturalWidth ? img.naturalWidth : new Promise(done => {
    img.addEventListener("load", () => done(img.naturalWidth));
    img.addEventListener("error", () => done(0));
})"""


def test_a_drafts_receipt_and_photo_reach_the_approver_when_it_is_submitted(
    acme: Any, live_server: Any, browser: Browser, files_root: Path
) -> None:
    base = live_server.url
    receipt, photo = pdf_bytes(), heic_with_exif()

    alice = sign_in(browser, base, "alice")
    alice.goto(f"{base}/workflows/new?template=expense-approval")
    alice.get_by_label("Amount").fill("1200.00")
    alice.get_by_label("Department").select_option(label="Engineering")
    alice.get_by_label("Reference").fill("E-DRAFT-FILES")
    alice.get_by_label("Receipts or quotes (optional)").set_input_files(
        [
            {"name": "receipt.pdf", "mimeType": "application/pdf", "buffer": receipt},
            {"name": "IMG_0042.HEIC", "mimeType": "image/heic", "buffer": photo},
        ]
    )
    alice.get_by_role("button", name="Save as draft").click()
    expect(alice.locator(".flash.success").last).to_contain_text("The draft keeps receipt.pdf")
    assert not Workflow.objects.exists()

    # the draft's form lists what it keeps, each a download for alice
    draft = Draft.objects.get()
    alice.locator(f'tr[data-draft="{draft.pk}"]').get_by_role("link", name="Edit").click()
    kept = alice.locator("#draft-files")
    expect(kept).to_contain_text("receipt.pdf")
    expect(kept).to_contain_text("IMG_0042.HEIC")
    shot(alice, "draft-with-files")
    assert_accessible(alice, "the form of a draft that keeps files")
    with alice.expect_download() as caught:
        kept.get_by_role("link", name="receipt.pdf").click()
    saved = caught.value.path()
    assert saved is not None and Path(saved).read_bytes() == receipt

    alice.get_by_role("button", name="Submit", exact=True).click()
    expect(alice.locator(".status")).to_have_text("Waiting: Manager")
    wf = Workflow.objects.get(subject_id="E-DRAFT-FILES")
    names = WorkflowEvent.objects.filter(workflow=wf, type="FileAttached").values_list(
        "payload__name", flat=True
    )
    assert sorted(names) == ["IMG_0042.HEIC", "receipt.pdf"]

    # bob reads both; the photo has its preview
    bob = sign_in(browser, base, "bob")
    bob.goto(f"{base}/workflows/{wf.pk}")
    files = bob.locator("#files")
    expect(files).to_contain_text("receipt.pdf")
    sha = hashlib.sha256(photo).hexdigest()
    preview = files.locator(f'img[src="/workflows/{wf.pk}/files/{sha}/preview"]')
    expect(preview).to_be_visible()
    preview.scroll_into_view_if_needed()
    assert preview.evaluate(LOADED_WIDTH) > 0  # the PNG drawn from the HEIC was served
    shot(bob, "request-from-draft-with-files")


def test_the_try_it_panel_names_the_people_to_submit_as(
    acme: Any, live_server: Any, browser: Browser
) -> None:
    template = WorkflowTemplate.objects.filter(tenant=acme, key=EXPENSE).first()
    assert template is not None
    fiona = admin_page(browser, live_server.url, "fiona")

    fiona.goto(f"{live_server.url}/admin/approvals/workflowtemplate/{template.pk}/change/")

    fiona.get_by_role("navigation", name="Parts of this page").get_by_role(
        "link", name="Try it"
    ).click()
    submitter = fiona.get_by_label("Submitted by")
    expect(submitter).to_be_visible()
    shown = submitter.locator("option").all_inner_texts()
    assert "Bob" in " ".join(shown) and "bob" not in shown and "alice" not in shown
    submitter.scroll_into_view_if_needed()
    shot(fiona, "template-try-it-names")
