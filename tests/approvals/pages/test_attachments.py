"""The workflow page's files: the "Attach a receipt" form, the timeline's sentence with
its download link, the refusals in words, and the download to readers only."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from django.contrib.messages import get_messages

from approvals.models import WorkflowEvent
from approvals.services.attachments import NOT_ACCEPTED

from ..files import HTML, PDF, page_attach, upload
from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db


def _said(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_alice_attaches_a_receipt_and_bob_reads_it_in_the_timeline(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-files-1")
    alice = signed_in("alice")

    posted = page_attach(alice, wid, upload("receipt.pdf", PDF), request_id="page-file-1")

    assert posted.status_code == 302
    assert posted["Location"] == f"/workflows/{wid}#files"
    assert _said(posted) == [f"Attached receipt.pdf ({len(PDF)} bytes)."]
    page = signed_in("bob").get(f"/workflows/{wid}").content.decode()
    sha = hashlib.sha256(PDF).hexdigest()
    assert f"Alice attached receipt.pdf ({len(PDF)} bytes)" in page
    assert f'href="/workflows/{wid}/files/{sha}" download' in page
    assert "Attach a receipt" in page
    got = signed_in("bob").get(f"/workflows/{wid}/files/{sha}")
    assert got.status_code == 200
    assert got["Content-Disposition"] == 'attachment; filename="receipt.pdf"'
    assert got["X-Content-Type-Options"] == "nosniff"


def test_a_pdf_holding_html_is_refused_in_a_sentence_from_the_page(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-files-2")

    posted = page_attach(
        signed_in("alice"), wid, upload("receipt.pdf", HTML), request_id="page-html-1"
    )

    assert _said(posted) == [NOT_ACCEPTED]
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="FileAttached").exists()


def test_a_person_who_may_not_read_the_request_gets_404_for_its_files_and_form(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-files-3")
    page_attach(signed_in("alice"), wid, upload("receipt.pdf", PDF), request_id="page-file-3")
    sha = hashlib.sha256(PDF).hexdigest()
    ivan = signed_in("ivan")

    assert ivan.get(f"/workflows/{wid}/files/{sha}").status_code == 404
    assert page_attach(ivan, wid, upload("x.pdf", PDF), request_id="page-ivan-3").status_code == 404


def test_an_auditor_sees_the_files_but_no_form(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-files-4")
    page_attach(signed_in("alice"), wid, upload("receipt.pdf", PDF), request_id="page-file-4")

    page = signed_in("audrey").get(f"/workflows/{wid}").content.decode()

    assert "Alice attached receipt.pdf" in page
    assert "Attach a receipt" not in page


def test_the_attach_form_is_protected_against_cross_site_posts(
    acme: Any,
    files_root: Path,
) -> None:
    from django.test import Client

    from approvals.models import User

    wid = expense_started("E-files-5")
    client = Client(enforce_csrf_checks=True)
    client.force_login(User.objects.get(username="alice"))

    posted = page_attach(client, wid, upload("receipt.pdf", PDF), request_id="page-csrf-5")

    assert posted.status_code == 403
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="FileAttached").exists()
