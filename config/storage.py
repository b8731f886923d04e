"""Where attachments are kept, from the environment: the local disk by default, any
S3-compatible store (AWS S3, MinIO, Ceph, R2...) through django-storages once a bucket
is named. A plain function of the environment, so a test can read what production
would get without reloading the settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

S3_BACKEND = "storages.backends.s3.S3Storage"
FILESYSTEM_BACKEND = "django.core.files.storage.FileSystemStorage"


def attachments_storage(environ: Mapping[str, str], default_root: str) -> dict[str, Any]:
    """The ``STORAGES["attachments"]`` entry for ``environ``.

    With ``APPROVALS_S3_BUCKET`` set: S3Storage, objects private (no public ACL) and no
    signed URLs handed out (``querystring_auth`` off), because nobody downloads from the
    store: every download goes through the app's view, which asks the read rule first.
    The keys come from ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` when given,
    else from boto3's own chain (an instance role, ``~/.aws``).
    """
    bucket = environ.get("APPROVALS_S3_BUCKET", "").strip()
    if bucket:
        options: dict[str, Any] = {
            "bucket_name": bucket,
            "default_acl": "private",
            "querystring_auth": False,
            "file_overwrite": True,  # a name is a SHA-256: the same name is the same bytes
            "location": environ.get("APPROVALS_S3_PREFIX", "").strip().strip("/"),
        }
        for option, variable in (
            ("endpoint_url", "APPROVALS_S3_ENDPOINT_URL"),
            ("region_name", "APPROVALS_S3_REGION"),
            ("access_key", "AWS_ACCESS_KEY_ID"),
            ("secret_key", "AWS_SECRET_ACCESS_KEY"),
        ):
            value = environ.get(variable, "").strip()
            if value:
                options[option] = value
        return {"BACKEND": S3_BACKEND, "OPTIONS": options}
    backend = environ.get("APPROVALS_FILES_BACKEND", FILESYSTEM_BACKEND)
    root = environ.get("APPROVALS_FILES_ROOT", default_root)
    return {
        "BACKEND": backend,
        "OPTIONS": {"location": root} if backend.endswith("FileSystemStorage") else {},
    }


def archive_storage(environ: Mapping[str, str], default_root: str) -> dict[str, Any]:
    """The ``STORAGES["archive"]`` entry for ``environ``: where the archiver writes the
    months it moves out of the database (approvals.audit.archive). The same choice as
    the attachments' under the archive's own names: the local disk under
    ``APPROVALS_ARCHIVE_ROOT`` by default, an S3-compatible bucket once
    ``APPROVALS_ARCHIVE_S3_BUCKET`` is set (``APPROVALS_ARCHIVE_S3_ENDPOINT_URL``,
    ``APPROVALS_ARCHIVE_S3_REGION``, ``APPROVALS_ARCHIVE_S3_PREFIX``; the AWS keys are
    shared)."""
    renamed = {
        "APPROVALS_S3_BUCKET": "APPROVALS_ARCHIVE_S3_BUCKET",
        "APPROVALS_S3_ENDPOINT_URL": "APPROVALS_ARCHIVE_S3_ENDPOINT_URL",
        "APPROVALS_S3_REGION": "APPROVALS_ARCHIVE_S3_REGION",
        "APPROVALS_S3_PREFIX": "APPROVALS_ARCHIVE_S3_PREFIX",
        "APPROVALS_FILES_BACKEND": "APPROVALS_ARCHIVE_BACKEND",
        "APPROVALS_FILES_ROOT": "APPROVALS_ARCHIVE_ROOT",
    }
    mine = {name: environ[theirs] for name, theirs in renamed.items() if theirs in environ}
    for shared in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        if shared in environ:
            mine[shared] = environ[shared]
    return attachments_storage(mine, default_root)
