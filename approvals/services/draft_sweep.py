"""Draft files nothing references, removed from storage.

A draft's copies of its files (``selectors.drafts.draft_file_name``) are deleted after
the transaction that submitted or deleted the draft commits; a process that dies in
between, or a storage that refused the delete, leaves copies no row names. So does an
upload whose transaction rolled back after the bytes were written. The periodic job
``approvals.sweep_draft_files`` (and ``manage.py sweep_draft_files``) removes them:
every file under ``drafts/`` that no ``DraftFile`` row names and that is older than
APPROVALS_DRAFT_FILES_GRACE_SECONDS, so that an upload still in flight (bytes written,
row not yet committed) is never taken.

Only the storage API is used (``listdir``, ``get_modified_time``, ``delete``), so the
local disk and an S3-compatible bucket are swept alike. Each draft's folder is decided
with the draft's row locked, as ``draft_files_add`` locks it while it writes, so an
upload to the same draft waits for the sweep rather than racing it.

The requests' own files (stored once under their hash) are not swept: the history that
names them may be archived out of the database (approvals.audit.archive), so "no event
names it" does not mean "unused"."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.core.files.storage import Storage
from django.db import transaction

from .. import clock
from ..models import Draft, DraftFile
from ..selectors.drafts import draft_file_name
from .attachments import attachment_storage

log = logging.getLogger(__name__)

DRAFTS_FOLDER = "drafts"


@dataclass
class DraftSweep:
    """What one sweep did: the names it deleted, and those it could not."""

    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def draft_files_sweep(*, grace: dt.timedelta | None = None) -> DraftSweep:
    """Delete every draft file in storage that no ``DraftFile`` row names and whose
    last change is older than ``grace`` (default APPROVALS_DRAFT_FILES_GRACE_SECONDS).
    A file that cannot be read or deleted is logged and left for the next run; the
    others are swept all the same. Running it again finds nothing more to do."""
    if grace is None:
        grace = dt.timedelta(seconds=settings.APPROVALS_DRAFT_FILES_GRACE_SECONDS)
    storage = attachment_storage()
    cutoff = clock.now() - grace
    result = DraftSweep()
    try:
        folders, _loose = storage.listdir(DRAFTS_FOLDER)
    except FileNotFoundError:
        return result  # no draft ever kept a file here
    for folder in sorted(folders):
        path = f"{DRAFTS_FOLDER}/{folder}"
        try:
            names = [f"{path}/{name}" for name in storage.listdir(path)[1]]
        except Exception:
            log.warning("draft files sweep: cannot list %s", path, exc_info=True)
            continue
        old = [name for name in names if _older_than(storage, name, cutoff)]
        if old:
            _sweep_folder(storage, folder, old, every=len(old) == len(names), result=result)
    if result.removed or result.failed:
        log.info(
            "draft files sweep: %d removed, %d could not be removed",
            len(result.removed),
            len(result.failed),
        )
    return result


def _older_than(storage: Storage, name: str, cutoff: dt.datetime) -> bool:
    try:
        return bool(storage.get_modified_time(name) < cutoff)
    except FileNotFoundError:
        return False  # gone meanwhile
    except Exception:
        log.warning("draft files sweep: no age for %s; kept", name, exc_info=True)
        return False


def _draft_id(folder: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(folder)
    except ValueError:
        return None


def _sweep_folder(
    storage: Storage, folder: str, old: list[str], *, every: bool, result: DraftSweep
) -> None:
    """Delete the names of ``old`` (under one draft's folder) that its draft does not
    keep, with the draft locked; the folder too when ``every`` file went."""
    draft_id = _draft_id(folder)
    with transaction.atomic():
        kept: set[str] = set()
        if draft_id is not None:
            list(Draft.objects.select_for_update().filter(pk=draft_id).values_list("pk"))
            kept = {
                draft_file_name(draft_id, sha)
                for sha in DraftFile.objects.filter(draft_id=draft_id).values_list(
                    "sha256", flat=True
                )
            }
        gone = 0
        for name in old:
            if name in kept:
                continue
            try:
                storage.delete(name)
            except Exception:
                log.warning("draft files sweep: cannot delete %s", name, exc_info=True)
                result.failed.append(name)
                continue
            result.removed.append(name)
            gone += 1
        if every and gone == len(old):
            # An empty folder on the local disk; on an object store there is none.
            try:
                storage.delete(f"{DRAFTS_FOLDER}/{folder}")
            except Exception:
                log.debug("draft files sweep: folder %s kept", folder, exc_info=True)
