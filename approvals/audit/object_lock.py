"""The archive's S3 Object Lock following the organisation's retention and legal holds.

Each archived object (a month's events file and manifest, approvals.audit.archive) is
written locked until its retention ends (``retention.kept_until``). When an
organisation lengthens its retention, ``locks_extend`` moves each object's
retain-until date to the new end (PutObjectRetention: a compliance-mode lock may be
lengthened, never shortened); a shortening leaves the locks as they are and says so.
``legal_holds_sync`` puts an Object Lock legal hold on every archived object of a held
organisation, or of the month of a held request (PutObjectLegalHold ON), and takes it
off (OFF) once no hold covers it. On the local disk the files are read-only and carry
no lock date or legal hold: there is nothing to set, and the words say so.

The object's current version is the one set (the version the archive reads); an object
deleted by policy after its retention is left alone."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.files.storage import storages

from .models import ArchivedMonth, ArchivedWorkflow

ALIAS = "archive"  # the archive store (approvals.audit.archive.ALIAS)

EXTENDED = "The archive's {n} locked object(s) now stay locked until their retention's new end."
ALREADY = "The archive's locks already reach the end of the retention."
KEPT = (
    "Locks already on the archive's objects stay as they are: an Object Lock can be "
    "lengthened, never shortened. A month deleted after the shorter retention leaves "
    "the store's view at once, while its locked copy stays until the earlier lock ends."
)
LOCAL = (
    "The archive is on the local disk: its files are read-only and carry no lock date, "
    "so there is nothing to extend."
)
NOTHING_ARCHIVED = ""
STORE_REFUSED = (
    "The archive store refused to {what} ({error}); nothing was changed. Try again once "
    "the store answers."
)


class LockRefused(Exception):
    """The store refused a lock change; said in words."""


@dataclass(frozen=True)
class _Bucket:
    client: Any
    name: str
    key: Callable[[str], str]


def _bucket() -> _Bucket | None:
    """The archive's S3 bucket, None when the archive is on the local disk."""
    # boto3 is imported only when the archive is on S3
    from storages.backends.s3 import S3Storage  # type: ignore[import-untyped]
    from storages.utils import clean_name  # type: ignore[import-untyped]

    storage = storages[ALIAS]
    if not isinstance(storage, S3Storage):
        return None
    return _Bucket(
        client=storage.connection.meta.client,
        name=storage.bucket_name,
        key=lambda name: storage._normalize_name(clean_name(name)),
    )


def _objects(bucket: _Bucket, tenant_id: int) -> Iterator[tuple[ArchivedMonth, dict[str, Any]]]:
    """Each archived object of the organisation still in the store, with its HEAD
    (version, lock mode, retain-until date, legal hold)."""
    from botocore.exceptions import BotoCoreError, ClientError  # type: ignore[import-untyped]

    try:  # an object's HEAD answers 404 for a missing bucket as for a deleted object
        bucket.client.head_bucket(Bucket=bucket.name)
    except (ClientError, BotoCoreError) as exc:
        what = f"open the bucket {bucket.name}"
        raise LockRefused(STORE_REFUSED.format(what=what, error=exc)) from exc
    for month in ArchivedMonth.objects.filter(tenant_id=tenant_id).order_by("month"):
        for name in (month.data_name, month.manifest_name):
            if not name:
                continue
            key = bucket.key(name)
            try:
                head = bucket.client.head_object(Bucket=bucket.name, Key=key)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
                    continue  # deleted by policy: left alone
                raise LockRefused(STORE_REFUSED.format(what=f"read {name}", error=exc)) from exc
            yield month, {**head, "Key": key, "Name": name}


def locks_extend(tenant_id: int, *, kept_until: Callable[[dt.datetime], dt.datetime]) -> str:
    """Move every archived object's retain-until date of the organisation to
    ``kept_until(its month's last finish)`` where that is later; never earlier. Says
    what it did, in words ("" with nothing archived). Raises LockRefused."""
    from botocore.exceptions import BotoCoreError, ClientError

    from .archive import whole_seconds_up

    if not ArchivedMonth.objects.filter(tenant_id=tenant_id).exists():
        return NOTHING_ARCHIVED
    bucket = _bucket()
    if bucket is None:
        return LOCAL
    extended = 0
    for month, head in _objects(bucket, tenant_id):
        until = whole_seconds_up(kept_until(month.last_finished_at or month.written_at))
        current = head.get("ObjectLockRetainUntilDate")
        if current is not None and current >= until:
            continue
        mode = head.get("ObjectLockMode") or settings.APPROVALS_ARCHIVE_OBJECT_LOCK_MODE
        try:
            bucket.client.put_object_retention(
                Bucket=bucket.name,
                Key=head["Key"],
                VersionId=head["VersionId"],
                Retention={"Mode": mode, "RetainUntilDate": until},
            )
        except (ClientError, BotoCoreError) as exc:
            what = f"extend the lock of {head['Name']}"
            raise LockRefused(STORE_REFUSED.format(what=what, error=exc)) from exc
        extended += 1
    return EXTENDED.format(n=extended) if extended else ALREADY


def locks_kept(tenant_id: int) -> str:
    """What a shorter retention does to the archive's locks: nothing; in words."""
    if not ArchivedMonth.objects.filter(tenant_id=tenant_id).exists():
        return NOTHING_ARCHIVED
    return KEPT if _bucket() is not None else LOCAL


def legal_holds_sync(tenant_id: int, *, organisation_held: bool, held_workflows: set[str]) -> int:
    """Put the Object Lock legal hold ON every archived object of the organisation
    when it is held, or of a month holding a held request, and OFF on the others;
    returns how many objects changed (none on the local disk). Raises LockRefused."""
    from botocore.exceptions import BotoCoreError, ClientError

    bucket = _bucket()
    if bucket is None or not ArchivedMonth.objects.filter(tenant_id=tenant_id).exists():
        return 0
    held_months = set(
        ArchivedWorkflow.objects.filter(
            tenant_id=tenant_id, workflow_id__in=list(held_workflows)
        ).values_list("month", flat=True)
    )
    changed = 0
    for month, head in _objects(bucket, tenant_id):
        wanted = "ON" if organisation_held or month.month in held_months else "OFF"
        if head.get("ObjectLockLegalHoldStatus", "OFF") == wanted:
            continue
        try:
            bucket.client.put_object_legal_hold(
                Bucket=bucket.name,
                Key=head["Key"],
                VersionId=head["VersionId"],
                LegalHold={"Status": wanted},
            )
        except (ClientError, BotoCoreError) as exc:
            what = f"set the legal hold of {head['Name']} {wanted}"
            raise LockRefused(STORE_REFUSED.format(what=what, error=exc)) from exc
        changed += 1
    return changed
