"""Files on a request through the API: stored once under their SHA-256, recorded by a
FileAttached event through the command path (so the history, the export and the hash
chain cover them), downloaded by whoever may read the request and by no one else, and
refused, with nothing stored or recorded, when the content is not an accepted type or
the file is over the limit."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.core.management import call_command

from approvals.models import WorkflowEvent
from approvals.services.attachments import NOT_ACCEPTED, TOO_LARGE
from approvals.web.uploads import AttachmentUploadHandler

from ..files import HTML, PDF, api_attach, stored_files
from ..helpers import start_expense

pytestmark = pytest.mark.django_db


def _started(api: Any) -> str:
    started = start_expense(api("alice"), 4_500_000)
    assert started.status_code == 201, started.content
    return str(started.json()["workflowId"])


def _events(wid: str) -> list[str]:
    return list(
        WorkflowEvent.objects.filter(workflow_id=wid).order_by("seq").values_list("type", flat=True)
    )


def test_a_receipt_alice_attaches_is_downloaded_by_bob_and_not_found_for_ivan(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = _started(api)
    sha = hashlib.sha256(PDF).hexdigest()

    added = api_attach(api("alice"), wid, PDF, "receipt.pdf", "alice-file-1")

    assert added.status_code == 200, added.content
    body = added.json()
    assert body["sha256"] == sha
    assert (body["name"], body["size"], body["contentType"]) == (
        "receipt.pdf",
        len(PDF),
        "application/pdf",
    )
    assert body["duplicate"] is False
    got = api("bob").get(f"/api/workflows/{wid}/attachments/{sha}")
    assert got.status_code == 200
    assert b"".join(got.streaming_content) == PDF
    # ivan (IT admins) takes no part in alice's request: for him it does not exist
    refused = api("ivan").get(f"/api/workflows/{wid}/attachments/{sha}")
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == "NOT_FOUND"
    assert api_attach(api("ivan"), wid, PDF, "mine.pdf", "ivan-file-1").status_code == 404


def test_the_download_is_saved_never_shown_with_its_sniffed_type(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = _started(api)
    # a PDF named as an image: served as the PDF it is
    sha = api_attach(api("alice"), wid, PDF, "photo.png", "alice-file-2").json()["sha256"]

    got = api("bob").get(f"/api/workflows/{wid}/attachments/{sha}")

    assert got["Content-Type"] == "application/pdf"
    assert got["Content-Disposition"] == 'attachment; filename="photo.png"'
    assert got["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in got["Content-Security-Policy"]


def test_a_pdf_name_holding_html_is_refused_and_nothing_is_stored_or_recorded(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = _started(api)
    before = _events(wid)

    refused = api_attach(api("alice"), wid, HTML, "receipt.pdf", "alice-html-1")

    assert refused.status_code == 422
    assert refused.json()["error"] == {
        "code": "FILE_TYPE_NOT_ACCEPTED",
        "message": NOT_ACCEPTED,
        "requestId": "alice-html-1",
    }
    assert _events(wid) == before
    assert stored_files(files_root) == []
    sha = hashlib.sha256(HTML).hexdigest()
    assert api("alice").get(f"/api/workflows/{wid}/attachments/{sha}").status_code == 404


def test_a_file_over_the_limit_is_refused_as_it_streams_and_nothing_is_recorded(
    acme: Any, api: Any, files_root: Path, settings: Any
) -> None:
    settings.APPROVALS_FILE_MAX_BYTES = 4096
    wid = _started(api)
    before = _events(wid)

    refused = api_attach(api("alice"), wid, PDF + b"0" * 10_000, "big.pdf", "alice-big-1")

    assert refused.status_code == 413
    error = refused.json()["error"]
    assert error["code"] == "FILE_TOO_LARGE"
    assert "larger than 4 KB" in error["message"]
    assert _events(wid) == before
    assert stored_files(files_root) == []


def test_a_body_far_over_the_file_limit_is_refused_before_it_is_read(
    acme: Any, api: Any, files_root: Path, settings: Any
) -> None:
    settings.APPROVALS_FILE_MAX_BYTES = 1024
    wid = _started(api)

    refused = api_attach(api("alice"), wid, PDF + b"0" * 400_000, "big.pdf", "alice-big-2")

    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "BODY_TOO_LARGE"
    assert stored_files(files_root) == []


def test_the_attachment_is_in_the_history_the_export_and_a_chain_that_verifies(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = _started(api)
    sha = api_attach(api("bob"), wid, PDF, "quote.pdf", "bob-file-1").json()["sha256"]

    event = WorkflowEvent.objects.get(workflow_id=wid, type="FileAttached")
    assert event.payload["sha256"] == sha
    assert (event.payload["actor"], event.payload["name"], event.payload["size"]) == (
        "bob",
        "quote.pdf",
        len(PDF),
    )
    assert event.request_id == "bob-file-1"
    exported = api("audrey").get("/api/audit/export?format=jsonl")
    rows = [json.loads(x) for x in b"".join(exported.streaming_content).splitlines()]
    attached = [r for r in rows if r.get("workflow_id") == wid and r["type"] == "FileAttached"]
    assert len(attached) == 1
    assert sha in json.dumps(attached[0])
    out = io.StringIO()
    call_command("verify_audit", stdout=out)  # raises CommandError on a broken chain
    assert out.getvalue().startswith("OK: ")
    assert "BROKEN" not in out.getvalue()


def test_the_same_request_id_records_the_file_once(acme: Any, api: Any, files_root: Path) -> None:
    wid = _started(api)

    first = api_attach(api("alice"), wid, PDF, "receipt.pdf", "alice-again-1")
    again = api_attach(api("alice"), wid, PDF, "receipt.pdf", "alice-again-1")

    assert first.json()["duplicate"] is False
    assert again.status_code == 200
    assert again.json()["duplicate"] is True
    assert _events(wid).count("FileAttached") == 1
    assert len(stored_files(files_root)) == 1


def test_the_same_bytes_attached_twice_are_stored_once(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = _started(api)

    api_attach(api("alice"), wid, PDF, "receipt.pdf", "alice-twice-1")
    api_attach(api("bob"), wid, PDF, "receipt-copy.pdf", "bob-twice-1")

    assert _events(wid).count("FileAttached") == 2
    assert len(stored_files(files_root)) == 1


def test_an_auditor_reads_the_files_but_adds_none(acme: Any, api: Any, files_root: Path) -> None:
    wid = _started(api)
    sha = api_attach(api("alice"), wid, PDF, "receipt.pdf", "alice-aud-1").json()["sha256"]

    assert api("audrey").get(f"/api/workflows/{wid}/attachments/{sha}").status_code == 200
    refused = api_attach(api("audrey"), wid, PDF + b"\n", "mine.pdf", "audrey-file-1")
    assert refused.status_code == 403
    assert _events(wid).count("FileAttached") == 1


def test_a_file_of_one_request_is_not_found_through_another(
    acme: Any, api: Any, files_root: Path
) -> None:
    first, second = _started(api), _started(api)
    sha = api_attach(api("alice"), first, PDF, "receipt.pdf", "alice-other-1").json()["sha256"]

    assert api("alice").get(f"/api/workflows/{second}/attachments/{sha}").status_code == 404


def test_a_multi_megabyte_upload_is_stored_under_its_sha256(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = _started(api)
    content = PDF + os.urandom(6 * 1024 * 1024)

    added = api_attach(api("alice"), wid, content, "scan.pdf", "alice-scan-1")

    assert added.status_code == 200, added.content
    sha = hashlib.sha256(content).hexdigest()
    assert added.json()["sha256"] == sha
    kept = files_root / sha[:2] / sha
    assert hashlib.sha256(kept.read_bytes()).hexdigest() == sha


def test_the_upload_handler_writes_chunks_to_disk_and_stops_past_the_limit(
    settings: Any,
) -> None:
    settings.APPROVALS_FILE_MAX_BYTES = 100
    handler = AttachmentUploadHandler()
    handler.new_file("file", "a.pdf", "application/pdf", None)
    handler.receive_data_chunk(b"x" * 60, 0)
    kept = handler.file_complete(60)
    assert isinstance(kept, TemporaryUploadedFile)  # on disk, not in memory
    assert os.path.getsize(kept.temporary_file_path()) == 60

    handler.new_file("file", "b.pdf", "application/pdf", None)
    handler.receive_data_chunk(b"x" * 60, 0)
    with pytest.raises(Exception) as caught:
        handler.receive_data_chunk(b"x" * 60, 60)
    assert type(caught.value).__name__ == "SkipFile"
    assert handler.too_large


def test_the_too_large_message_names_the_size_and_the_limit(settings: Any) -> None:
    from approvals.services.attachments import too_large_message

    settings.APPROVALS_FILE_MAX_BYTES = 10 * 1024 * 1024
    assert too_large_message(25 * 512 * 1024) == TOO_LARGE.format(size="12.5 MB", limit="10 MB")


@pytest.mark.parametrize("parts", [6, 7, 12])
def test_more_file_parts_than_an_upload_takes_are_a_422_and_change_nothing(
    acme: Any, api: Any, files_root: Path, settings: Any, parts: int
) -> None:
    from approvals.services.attachments import TOO_MANY_AT_ONCE, TOO_MANY_CODE

    from ..files import upload

    wid = _started(api)
    before = _events(wid)
    limit = settings.APPROVALS_FILES_PER_UPLOAD
    assert parts > limit

    refused = api("alice").post(
        f"/api/workflows/{wid}/attachments",
        {
            "file": [upload(f"r{i}.pdf", PDF, "application/pdf") for i in range(parts)],
            "requestId": f"many-{parts}",
        },
        format="multipart",
    )

    assert refused.status_code == 422, refused.content
    assert refused.json()["error"]["code"] == TOO_MANY_CODE
    assert refused.json()["error"]["message"] == TOO_MANY_AT_ONCE.format(limit=limit, count=parts)
    assert _events(wid) == before
    assert stored_files(files_root) == []
