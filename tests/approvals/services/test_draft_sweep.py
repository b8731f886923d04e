"""The draft files sweep: a draft's copy that no row names (left by a crash between a
draft's deletion or submission and the removal of its copies) is deleted once it is
older than the grace period; a kept file and a fresh upload are not; a second run finds
nothing; a file the storage refuses to delete is logged and the others still go."""

from __future__ import annotations

import hashlib
import logging
import os
import time
import uuid
from io import StringIO
from pathlib import Path
from typing import Any, ClassVar

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage
from django.core.management import CommandError, call_command

from approvals.models import Draft
from approvals.selectors.drafts import draft_file_name
from approvals.services.attachments import attachment_storage
from approvals.services.draft_sweep import draft_files_sweep
from approvals.workers import tasks

from ..files import pdf_bytes, png_bytes, stored_files, upload
from ..pages.support import signed_in

pytestmark = pytest.mark.django_db

TWO_DAYS = 2 * 86400


class RefusingStorage(FileSystemStorage):
    """The local disk, except that deleting a name in ``refused`` fails, as a store
    that is down or denies the delete would."""

    refused: ClassVar[set[str]] = set()

    def delete(self, name: str) -> None:
        if name in self.refused:
            raise OSError(f"refused to delete {name}")
        super().delete(name)


def _kept_draft() -> tuple[Draft, str, bytes]:
    """A draft saved through the form with one receipt: its copy is named by a row."""
    receipt = pdf_bytes()
    posted = signed_in("alice").post(
        "/workflows/new?template=expense-approval",
        {
            "idempotency_key": "k-sweep",
            "intent": "draft",
            "currency": "INR",
            "amountPaise": "1200.00",
            "department": "eng",
            "subject_id": "E-sweep",
            "file": [upload("receipt.pdf", receipt)],
        },
    )
    assert posted.status_code == 302
    draft = Draft.objects.get()
    return draft, draft_file_name(draft.pk, hashlib.sha256(receipt).hexdigest()), receipt


def _leftover(draft_id: Any, content: bytes, *, age_seconds: int = 0) -> str:
    """A draft copy written to storage with no row naming it, ``age_seconds`` old."""
    storage = attachment_storage()
    name = storage.save(
        draft_file_name(draft_id, hashlib.sha256(content).hexdigest()), ContentFile(content)
    )
    if age_seconds:
        then = time.time() - age_seconds
        os.utime(storage.path(name), (then, then))
    return str(name)


def _names(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in stored_files(root)}


def test_an_old_leftover_goes_and_a_kept_file_and_a_fresh_upload_stay(
    acme: Any, files_root: Path
) -> None:
    draft, kept, receipt = _kept_draft()
    os.utime(files_root / kept, (time.time() - TWO_DAYS,) * 2)  # old, but named by its row
    deleted_draft = _leftover(uuid.uuid4(), b"%PDF-1.4 a deleted draft's", age_seconds=TWO_DAYS)
    beside_kept = _leftover(draft.pk, png_bytes((12, 12)), age_seconds=TWO_DAYS)
    in_flight = _leftover(uuid.uuid4(), b"%PDF-1.4 still being uploaded")
    assert _names(files_root) == {kept, deleted_draft, beside_kept, in_flight}

    swept = draft_files_sweep()

    assert sorted(swept.removed) == sorted([deleted_draft, beside_kept])
    assert swept.failed == []
    assert _names(files_root) == {kept, in_flight}
    # the deleted draft's folder went with its last file; the kept draft's did not
    assert not (files_root / deleted_draft).parent.exists()
    assert (files_root / kept).parent.is_dir()
    # the draft still serves its file
    download = signed_in("alice").get(f"/drafts/{draft.pk}/files/{kept.rsplit('/', 1)[1]}")
    assert download.status_code == 200 and download.getvalue() == receipt

    again = draft_files_sweep()

    assert again.removed == [] and again.failed == []
    assert _names(files_root) == {kept, in_flight}


def test_nothing_to_sweep_in_an_empty_storage(files_root: Path) -> None:
    assert not files_root.exists()

    swept = draft_files_sweep()

    assert swept.removed == [] and swept.failed == []


def test_a_delete_the_storage_refuses_is_logged_and_the_rest_still_go(
    files_root: Path, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": f"{__name__}.RefusingStorage",
            "OPTIONS": {"location": str(files_root)},
        },
    }
    leftovers = [
        _leftover(uuid.uuid4(), f"%PDF-1.4 leftover {i}".encode(), age_seconds=TWO_DAYS)
        for i in range(3)
    ]
    stuck = sorted(leftovers)[0]  # the first the sweep meets
    RefusingStorage.refused = {stuck}
    try:
        with caplog.at_level(logging.WARNING, logger="approvals.services.draft_sweep"):
            swept = draft_files_sweep()
    finally:
        RefusingStorage.refused = set()

    assert swept.failed == [stuck]
    assert sorted(swept.removed) == sorted(leftovers)[1:]
    assert _names(files_root) == {stuck}
    assert f"cannot delete {stuck}" in caplog.text
    # the next run, with the storage mended, takes it
    assert draft_files_sweep().removed == [stuck]
    assert _names(files_root) == set()


def test_the_periodic_task_and_the_command_sweep_as_well(files_root: Path) -> None:
    first = _leftover(uuid.uuid4(), b"%PDF-1.4 one", age_seconds=TWO_DAYS)
    assert tasks.sweep_draft_files() == 1
    assert _names(files_root) == set()

    second = _leftover(uuid.uuid4(), b"%PDF-1.4 two", age_seconds=3 * 3600)
    out = StringIO()
    call_command("sweep_draft_files", stdout=out)  # three hours: younger than a day
    assert _names(files_root) == {second}
    assert "0 draft file(s) removed" in out.getvalue()

    out = StringIO()
    call_command("sweep_draft_files", "--grace-hours", "2", stdout=out)
    assert _names(files_root) == set()
    assert f"removed {second}" in out.getvalue() and first not in out.getvalue()


@pytest.mark.parametrize("hours", ["0", "-5", "0.5", "nan"])
def test_the_command_refuses_a_grace_under_an_hour_and_deletes_nothing(
    files_root: Path, hours: str
) -> None:
    name = _leftover(uuid.uuid4(), b"%PDF-1.4 leftover", age_seconds=TWO_DAYS)

    with pytest.raises(CommandError, match="at least 1"):
        call_command("sweep_draft_files", "--grace-hours", hours, stdout=StringIO())

    assert _names(files_root) == {name}
