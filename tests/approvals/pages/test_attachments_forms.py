"""Files that come with the other forms (a new request, a resubmission, a comment), the
limits from settings (how many at once, how many on a request, which types, how many
pixels), each refusal in words with nothing started, stored or recorded, and the
previews on the Files card, served to readers only."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile

from approvals.models import Workflow, WorkflowEvent
from approvals.services.attachments import (
    REQUEST_FULL,
    TOO_MANY_AT_ONCE,
    not_accepted_message,
)
from approvals.services.previews import IMAGE_BOMB

from ..files import (
    HTML,
    PDF,
    bomb_png,
    heic_with_exif,
    page_attach,
    pdf_bytes,
    png_bytes,
    stored_files,
    upload,
)
from ..helpers import decide
from .support import expense_started, signed_in

pytestmark = pytest.mark.django_db


def _said(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def _files(wid: str) -> list[tuple[str, str]]:
    return [
        (e.payload["name"], e.actor.username if e.actor else "")
        for e in WorkflowEvent.objects.filter(workflow_id=wid, type="FileAttached")
        .select_related("actor")
        .order_by("seq")
    ]


def _new_form(subject: str, *files: SimpleUploadedFile) -> dict[str, Any]:
    return {
        "amountPaise": "45000.00",
        "currency": "INR",
        "department": "eng",
        "subject_id": subject,
        "idempotency_key": uuid.uuid4().hex,
        "intent": "submit",
        "file": list(files),
    }


# -- at start ----------------------------------------------------------------------------


def test_files_chosen_on_the_new_request_form_are_attached_when_it_starts(
    acme: Any,
    files_root: Path,
) -> None:
    form = _new_form(
        "E-start-1", upload("receipt.pdf", pdf_bytes()), upload("bill.png", png_bytes())
    )

    posted = signed_in("alice").post("/workflows/new?template=expense-approval", form)

    assert posted.status_code == 302, posted.content
    wf = Workflow.objects.get(subject_id="E-start-1")
    assert posted["Location"] == f"/workflows/{wf.pk}"
    assert _files(str(wf.pk)) == [("receipt.pdf", "alice"), ("bill.png", "alice")]
    assert any(m.startswith("Attached 2 files: receipt.pdf (") for m in _said(posted))
    page = signed_in("bob").get(f"/workflows/{wf.pk}").content.decode()
    assert "Alice attached receipt.pdf" in page
    assert "Alice attached bill.png" in page


def test_a_refused_file_on_the_new_request_form_starts_nothing(
    acme: Any,
    files_root: Path,
) -> None:
    form = _new_form("E-start-2", upload("receipt.pdf", PDF), upload("invoice.pdf", HTML))

    posted = signed_in("alice").post("/workflows/new?template=expense-approval", form)

    assert posted.status_code == 400
    errors = posted.context["form"].non_field_errors()
    assert f"invoice.pdf: {not_accepted_message()}" in errors
    assert not Workflow.objects.filter(subject_id="E-start-2").exists()
    assert stored_files(files_root) == []


# -- limits --------------------------------------------------------------------------------


def test_more_files_at_once_than_allowed_are_refused_in_words(
    acme: Any,
    files_root: Path,
    settings: Any,
) -> None:
    settings.APPROVALS_FILES_PER_UPLOAD = 2
    wid = expense_started("E-limit-1")
    three = [upload(f"r{i}.png", png_bytes((10 + i, 10))) for i in range(3)]

    posted = page_attach(signed_in("alice"), wid, *three)

    assert _said(posted) == [TOO_MANY_AT_ONCE.format(limit=2, count=3)]
    assert _files(wid) == []
    assert stored_files(files_root) == []


def test_a_request_holding_its_most_files_takes_no_new_one(
    acme: Any,
    files_root: Path,
    settings: Any,
) -> None:
    settings.APPROVALS_FILES_PER_REQUEST = 2
    wid = expense_started("E-limit-2")
    alice = signed_in("alice")
    page_attach(
        alice, wid, upload("a.png", png_bytes((11, 11))), upload("b.png", png_bytes((12, 12)))
    )

    refused = page_attach(alice, wid, upload("c.png", png_bytes((13, 13))))
    again = page_attach(alice, wid, upload("a-again.png", png_bytes((11, 11))))  # the same bytes

    assert _said(refused)[-1] == REQUEST_FULL.format(limit=2)
    assert _said(again)[-1].startswith("Attached a-again.png")
    assert [name for name, _ in _files(wid)] == ["a.png", "b.png", "a-again.png"]


def test_only_the_types_settings_accept_are_attached(
    acme: Any,
    files_root: Path,
    settings: Any,
) -> None:
    settings.APPROVALS_FILE_TYPES = ["application/pdf"]
    wid = expense_started("E-limit-3")

    refused = page_attach(signed_in("alice"), wid, upload("photo.png", png_bytes()))

    assert _said(refused) == [not_accepted_message()]
    assert "not a PDF file" in not_accepted_message()
    assert _files(wid) == []
    page = signed_in("alice").get(f"/workflows/{wid}").content.decode()
    assert 'accept="application/pdf,.pdf"' in page


def test_a_decompression_bomb_is_refused_in_words_and_nothing_is_kept(
    acme: Any,
    files_root: Path,
    settings: Any,
) -> None:
    settings.APPROVALS_IMAGE_MAX_PIXELS = 40_000_000
    wid = expense_started("E-limit-4")

    refused = page_attach(signed_in("alice"), wid, upload("receipt.png", bomb_png()))

    assert _said(refused) == [IMAGE_BOMB.format(limit="40")]
    assert _files(wid) == []
    assert stored_files(files_root) == []


# -- with a comment, on resubmission -------------------------------------------------------


def test_a_comment_carries_files_and_files_alone_need_no_words(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-comment-1")
    bob = signed_in("bob")

    with_words = bob.post(
        f"/workflows/{wid}/comments",
        {"text": "The quote I mentioned", "request_id": "c-1", "file": [upload("q.pdf", PDF)]},
    )
    alone = bob.post(
        f"/workflows/{wid}/comments",
        {"text": "  ", "request_id": "c-2", "file": [upload("bill.png", png_bytes())]},
    )

    assert with_words.status_code == 302 and alone.status_code == 302
    kinds = list(
        WorkflowEvent.objects.filter(workflow_id=wid, type__in=["CommentAdded", "FileAttached"])
        .order_by("seq")
        .values_list("type", flat=True)
    )
    assert kinds == ["CommentAdded", "FileAttached", "FileAttached"]
    assert _files(wid) == [("q.pdf", "bob"), ("bill.png", "bob")]
    assert _said(alone)[-1].startswith("Attached bill.png (")


def test_a_refused_file_keeps_the_comment_unrecorded_and_typed(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-comment-2")

    refused = signed_in("bob").post(
        f"/workflows/{wid}/comments",
        {"text": "See attached", "request_id": "c-3", "file": [upload("x.pdf", HTML)]},
    )

    assert refused.status_code == 422
    assert refused.context["comment_error"] == not_accepted_message()
    assert refused.context["comment_text"] == "See attached"
    assert not WorkflowEvent.objects.filter(workflow_id=wid, type="CommentAdded").exists()
    assert _files(wid) == []


def test_a_resubmission_carries_the_new_receipt(
    acme: Any,
    api: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-resubmit-1")
    assert decide(api("bob"), wid, "send_back", "sb-f1", comment="receipt?").status_code == 200

    posted = signed_in("alice").post(
        f"/workflows/{wid}/resubmit",
        {
            "amountPaise": "45000.00",
            "currency": "INR",
            "department": "eng",
            "request_id": "rs-f1",
            "comment": "receipt added",
            "file": [upload("receipt.pdf", PDF)],
        },
    )

    assert posted.status_code == 302, posted.content
    assert _files(wid) == [("receipt.pdf", "alice")]
    said = _said(posted)
    assert said[0].startswith("Resubmitted")
    assert said[1].startswith("Attached receipt.pdf")


# -- previews ------------------------------------------------------------------------------


def test_the_files_card_shows_previews_to_readers_and_says_when_there_is_none(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-preview-1")
    image = png_bytes((640, 480))
    page_attach(signed_in("alice"), wid, upload("bill.png", image), upload("broken.pdf", PDF))
    sha = hashlib.sha256(image).hexdigest()

    page = signed_in("bob").get(f"/workflows/{wid}").content.decode()
    preview = signed_in("bob").get(f"/workflows/{wid}/files/{sha}/preview")
    none = signed_in("bob").get(f"/workflows/{wid}/files/{hashlib.sha256(PDF).hexdigest()}/preview")

    assert f'src="/workflows/{wid}/files/{sha}/preview"' in page
    assert page.count("No preview") == 1  # the PDF that cannot be drawn
    assert preview.status_code == 200
    assert preview["Content-Type"] == "image/png"
    assert preview["X-Content-Type-Options"] == "nosniff"
    assert preview.getvalue().startswith(b"\x89PNG")
    assert none.status_code == 404
    assert signed_in("ivan").get(f"/workflows/{wid}/files/{sha}/preview").status_code == 404
    kept = sorted(str(p.relative_to(files_root)) for p in stored_files(files_root))
    assert f"previews/{sha[:2]}/{sha}.png" in kept


def test_a_phones_heic_photo_is_attached_and_previewed_for_the_approver(
    acme: Any,
    files_root: Path,
) -> None:
    wid = expense_started("E-preview-heic")
    photo = heic_with_exif()
    sha = hashlib.sha256(photo).hexdigest()

    posted = page_attach(signed_in("alice"), wid, upload("IMG_0042.HEIC", photo))

    assert posted.status_code == 302
    (event,) = WorkflowEvent.objects.filter(workflow_id=wid, type="FileAttached")
    assert (event.payload["name"], event.payload["content_type"]) == (
        "IMG_0042.HEIC",
        "image/heic",
    )
    page = signed_in("bob").get(f"/workflows/{wid}").content.decode()
    assert f'src="/workflows/{wid}/files/{sha}/preview"' in page
    preview = signed_in("bob").get(f"/workflows/{wid}/files/{sha}/preview")
    assert preview.status_code == 200 and preview.getvalue().startswith(b"\x89PNG")
    assert b"Alice Example" not in preview.getvalue()
