"""Files kept with a draft: checked as a request's files are (types, sizes, pixels, how
many), downloaded by the draft's author alone, recorded on the request when the draft is
submitted (stored once under their hash, previewed, a FileAttached event each that the
chain covers), and removed from storage with a draft that is deleted."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from django.contrib.messages import get_messages

from approvals.models import Draft, DraftFile, Workflow, WorkflowEvent
from approvals.selectors.drafts import draft_file_name
from approvals.services.attachments import (
    REQUEST_FULL,
    TOO_MANY_AT_ONCE,
    file_request_id,
    not_accepted_message,
)
from approvals.services.previews import IMAGE_BOMB

from ..files import HTML, bomb_png, page_attach, pdf_bytes, png_bytes, stored_files, upload
from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db

NEW = "/workflows/new?template=expense-approval"


def _draft_form(subject: str = "", *files: Any, **fields: str) -> dict[str, Any]:
    return {
        "idempotency_key": "k-draft",
        "intent": "draft",
        "currency": "INR",
        "amountPaise": "1200.00",
        "department": "eng",
        "subject_id": subject,
        "file": list(files),
        **fields,
    }


def _saved(client: Any, subject: str, *files: Any) -> Draft:
    response = client.post(NEW, _draft_form(subject, *files))
    assert response.status_code == 302, response.content.decode()[:3000]
    return Draft.objects.latest("created_at")


def _said(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def _errors(response: Any) -> str:
    return " ".join(str(e) for e in response.context["form"].non_field_errors())


def _pngs(count: int) -> list[Any]:
    return [upload(f"r{i}.png", png_bytes((10 + i, 10))) for i in range(count)]


def _relative(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in stored_files(root))


def test_a_draft_with_a_receipt_submitted_later_records_it_for_the_approver(
    acme: Any, files_root: Path, django_capture_on_commit_callbacks: Any
) -> None:
    receipt = pdf_bytes()
    sha = hashlib.sha256(receipt).hexdigest()
    alice = signed_in("alice")

    draft = _saved(alice, "E-draft-1", upload("receipt.pdf", receipt))

    # kept with the draft, under the draft, and nothing recorded or routed
    assert [(f.name, f.sha256, f.content_type) for f in draft.files.all()] == [
        ("receipt.pdf", sha, "application/pdf")
    ]
    assert _relative(files_root) == [draft_file_name(draft.pk, sha)]
    assert not Workflow.objects.exists() and not WorkflowEvent.objects.exists()
    form = alice.get(f"{NEW}&draft={draft.pk}").content.decode()
    link = f"/drafts/{draft.pk}/files/{sha}"
    assert "Files kept with this draft" in form and f'href="{link}"' in form
    download = alice.get(link)
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == receipt
    assert download["X-Content-Type-Options"] == "nosniff"
    assert download["Content-Disposition"].startswith("attachment")

    with django_capture_on_commit_callbacks(execute=True):
        submitted = alice.post(f"/drafts/{draft.pk}/submit")

    assert submitted.status_code == 302, _said(submitted)
    wf = Workflow.objects.get(subject_id="E-draft-1")
    (attached,) = WorkflowEvent.objects.filter(workflow=wf, type="FileAttached")
    assert attached.payload["sha256"] == sha
    assert (attached.payload["actor"], attached.payload["name"], attached.payload["size"]) == (
        "alice",
        "receipt.pdf",
        len(receipt),
    )
    assert attached.request_id == file_request_id(draft.idempotency_key, 0)
    # the approver downloads it and sees its preview; ivan, who may not read it, does not
    bob = signed_in("bob")
    got = bob.get(f"/workflows/{wf.pk}/files/{sha}")
    assert got.status_code == 200 and b"".join(got.streaming_content) == receipt
    assert bob.get(f"/workflows/{wf.pk}/files/{sha}/preview").status_code == 200
    assert signed_in("ivan").get(f"/workflows/{wf.pk}/files/{sha}").status_code == 404
    # stored once under its hash, with its preview; the draft's copy is gone
    assert _relative(files_root) == [f"{sha[:2]}/{sha}", f"previews/{sha[:2]}/{sha}.png"]
    assert not DraftFile.objects.exists()
    assert alice.get(link).status_code == 404

    # a second submission answers as the first and records nothing more
    again = alice.post(f"/drafts/{draft.pk}/submit")
    assert again.status_code == 302
    assert WorkflowEvent.objects.filter(workflow=wf, type="FileAttached").count() == 1


def test_another_person_cannot_read_a_drafts_file(acme: Any, files_root: Path) -> None:
    receipt = pdf_bytes()
    sha = hashlib.sha256(receipt).hexdigest()
    draft = _saved(signed_in("alice"), "E-draft-2", upload("receipt.pdf", receipt))
    link = f"/drafts/{draft.pk}/files/{sha}"

    for person in ("bob", "ivan", "audrey"):
        assert signed_in(person).get(link).status_code == 404, person
    assert signed_in("bob").get(f"{NEW}&draft={draft.pk}").status_code == 404
    # nor a hash the draft does not keep, for its author
    other = hashlib.sha256(b"other").hexdigest()
    assert signed_in("alice").get(f"/drafts/{draft.pk}/files/{other}").status_code == 404


def test_the_limits_apply_to_a_draft(acme: Any, files_root: Path, settings: Any) -> None:
    settings.APPROVALS_FILES_PER_REQUEST = 2
    settings.APPROVALS_FILES_PER_UPLOAD = 2
    alice = signed_in("alice")

    # the type is told by the content: HTML named .pdf saves no draft and keeps nothing
    html = alice.post(NEW, _draft_form("E-draft-3", upload("receipt.pdf", HTML)))
    assert html.status_code == 400
    assert not_accepted_message() in _errors(html)
    bomb = alice.post(NEW, _draft_form("E-draft-3", upload("receipt.png", bomb_png())))
    assert IMAGE_BOMB.format(limit="40") in _errors(bomb)
    many = alice.post(NEW, _draft_form("E-draft-3", *_pngs(3)))
    assert TOO_MANY_AT_ONCE.format(limit=2, count=3) in _errors(many)
    assert not Draft.objects.exists() and stored_files(files_root) == []

    # two files fill the draft as they would fill a request; a third is refused
    draft = _saved(alice, "E-draft-3", *_pngs(2))
    edit = f"{NEW}&draft={draft.pk}"
    third = alice.post(edit, _draft_form("E-draft-3", upload("c.png", png_bytes((30, 30)))))
    assert third.status_code == 400
    assert REQUEST_FULL.format(limit=2) in _errors(third)
    assert draft.files.count() == 2 and len(stored_files(files_root)) == 2
    # nor may the submit form bring one more than the request may hold
    submit = {**_draft_form("E-draft-3", upload("d.png", png_bytes((31, 31)))), "intent": "submit"}
    refused = alice.post(edit, submit)
    assert REQUEST_FULL.format(limit=2) in _errors(refused)
    assert not Workflow.objects.exists()


def test_a_deleted_drafts_files_are_removed_and_a_requests_copy_stays(
    acme: Any, files_root: Path, django_capture_on_commit_callbacks: Any
) -> None:
    receipt = pdf_bytes()
    sha = hashlib.sha256(receipt).hexdigest()
    alice = signed_in("alice")
    wid = expense_started("E-kept")
    page_attach(alice, wid, upload("receipt.pdf", receipt))  # the same bytes on a request
    draft = _saved(alice, "E-draft-4", upload("receipt-copy.pdf", receipt))
    assert draft_file_name(draft.pk, sha) in _relative(files_root)

    with django_capture_on_commit_callbacks(execute=True):
        deleted = alice.post(f"/drafts/{draft.pk}/delete")

    assert deleted.status_code == 302
    assert not Draft.objects.exists() and not DraftFile.objects.exists()
    assert _relative(files_root) == [f"{sha[:2]}/{sha}", f"previews/{sha[:2]}/{sha}.png"]
    assert signed_in("bob").get(f"/workflows/{wid}/files/{sha}").status_code == 200


def test_a_draft_saved_again_keeps_its_files_and_adds_new_ones_once(
    acme: Any, files_root: Path
) -> None:
    alice = signed_in("alice")
    first, second = png_bytes((20, 20)), png_bytes((21, 21))
    draft = _saved(alice, "E-draft-5", upload("a.png", first))
    edit = f"{NEW}&draft={draft.pk}"

    alice.post(
        edit, _draft_form("E-draft-5", upload("a-again.png", first), upload("b.png", second))
    )

    assert sorted(draft.files.values_list("name", flat=True)) == ["a.png", "b.png"]
    submitted = alice.post(edit, {**_draft_form("E-draft-5"), "intent": "submit"})
    assert submitted.status_code == 302
    names = WorkflowEvent.objects.filter(type="FileAttached").values_list(
        "payload__name", flat=True
    )
    assert sorted(names) == ["a.png", "b.png"]
