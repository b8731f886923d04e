"""Attachments in an S3-compatible store, as production keeps them: moto's S3 server runs
as a real process on a loopback port, the storage is what config/storage.py builds from
the environment, a file goes in through the page's upload view and comes back through
the download view, under its SHA-256, private, and stored once however often it is
attached."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import storages

from approvals import clock
from approvals.models import Draft, DraftFile, User, WorkflowEvent
from approvals.selectors.drafts import draft_file_name
from approvals.services.draft_sweep import draft_files_sweep
from config.storage import S3_BACKEND, attachments_storage

from .files import page_attach, png_bytes, upload
from .pages.support import expense_started, signed_in

boto3 = pytest.importorskip("boto3")

BUCKET = "approvals-files"
KEYS = {"AWS_ACCESS_KEY_ID": "testing-key", "AWS_SECRET_ACCESS_KEY": "testing-secret"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server in its own process on a free loopback port."""
    port = _free_port()
    program = Path(sys.executable).with_name("moto_server")
    command = [str(program)] if program.exists() else [sys.executable, "-m", "moto.server"]
    log = (tmp_path_factory.mktemp("moto") / "server.log").open("wb")
    server = subprocess.Popen(  # noqa: S603
        [*command, "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **KEYS},
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto's S3 server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


@pytest.fixture
def s3(s3_endpoint: str, settings: Any) -> Iterator[Any]:
    """A fresh versioned bucket (so a second write would show as a second version) and
    the attachments storage pointed at it, as the environment would configure it."""
    bucket = f"{BUCKET}-{uuid.uuid4().hex[:8]}"
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"],
    )
    client.create_bucket(Bucket=bucket)
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    environ = {
        "APPROVALS_S3_BUCKET": bucket,
        "APPROVALS_S3_ENDPOINT_URL": s3_endpoint,
        "APPROVALS_S3_REGION": "us-east-1",
        **KEYS,
    }
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": attachments_storage(environ, "/nonexistent"),
    }
    client.bucket = bucket
    yield client


def test_the_environment_names_a_private_s3_store_without_signed_urls() -> None:
    got = attachments_storage(
        {
            "APPROVALS_S3_BUCKET": "receipts",
            "APPROVALS_S3_ENDPOINT_URL": "https://s3.example.internal",
            "APPROVALS_S3_REGION": "ap-south-1",
            "AWS_ACCESS_KEY_ID": "id",
            "AWS_SECRET_ACCESS_KEY": "secret",
        },
        "/srv/files",
    )

    assert got["BACKEND"] == S3_BACKEND == "storages.backends.s3.S3Storage"
    assert got["OPTIONS"] == {
        "bucket_name": "receipts",
        "endpoint_url": "https://s3.example.internal",
        "region_name": "ap-south-1",
        "access_key": "id",
        "secret_key": "secret",
        "default_acl": "private",
        "querystring_auth": False,
        "file_overwrite": True,
        "location": "",
    }
    disk = attachments_storage({}, "/srv/files")
    assert disk["OPTIONS"] == {"location": "/srv/files"}


@pytest.mark.topology
@pytest.mark.django_db
def test_a_file_goes_to_s3_under_its_hash_once_and_comes_back_through_the_view(
    acme: Any, s3: Any
) -> None:
    image = png_bytes((400, 300))
    sha = hashlib.sha256(image).hexdigest()
    first = expense_started("E-s3-1")
    second = expense_started("E-s3-2")
    alice = signed_in("alice")

    for wid, rid in ((first, "s3-1"), (second, "s3-2")):
        posted = page_attach(alice, wid, upload("bill.png", image), request_id=rid)
        assert posted.status_code == 302

    versions = s3.list_object_versions(Bucket=s3.bucket).get("Versions", [])
    keys = sorted(v["Key"] for v in versions)
    assert keys == [f"{sha[:2]}/{sha}", f"previews/{sha[:2]}/{sha}.png"]  # each written once
    assert WorkflowEvent.objects.filter(type="FileAttached", payload__sha256=sha).count() == 2
    stored = s3.get_object(Bucket=s3.bucket, Key=f"{sha[:2]}/{sha}")["Body"].read()
    assert stored == image
    grants = s3.get_object_acl(Bucket=s3.bucket, Key=f"{sha[:2]}/{sha}")["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"]  # the owner's alone
    assert "Signature" not in storages["attachments"].url(f"{sha[:2]}/{sha}")

    got = signed_in("bob").get(f"/workflows/{first}/files/{sha}")
    assert got.status_code == 200
    assert got.getvalue() == image
    assert got["Content-Disposition"] == 'attachment; filename="bill.png"'
    preview = signed_in("bob").get(f"/workflows/{first}/files/{sha}/preview")
    assert preview.status_code == 200
    assert preview.getvalue().startswith(b"\x89PNG")
    assert signed_in("ivan").get(f"/workflows/{first}/files/{sha}").status_code == 404


@pytest.mark.topology
@pytest.mark.django_db
def test_the_draft_files_sweep_works_on_s3_through_the_storage_api(acme: Any, s3: Any) -> None:
    alice = User.objects.get(username="alice")
    draft = Draft.objects.create(
        tenant_id=alice.member_tenant_id,
        author=alice,
        template_key="expense-approval",
        created_at=clock.now(),
        updated_at=clock.now(),
    )
    kept_sha, lost_sha = hashlib.sha256(b"kept").hexdigest(), hashlib.sha256(b"lost").hexdigest()
    DraftFile.objects.create(
        draft=draft,
        tenant_id=alice.member_tenant_id,
        sha256=kept_sha,
        name="kept.pdf",
        size=4,
        content_type="application/pdf",
        added_at=clock.now(),
    )
    storage = storages["attachments"]
    kept = storage.save(draft_file_name(draft.pk, kept_sha), ContentFile(b"kept"))
    lost = storage.save(draft_file_name(uuid.uuid4(), lost_sha), ContentFile(b"lost"))

    def keys() -> list[str]:
        return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=s3.bucket).get("Contents", []))

    assert draft_files_sweep().removed == []  # both were written just now
    assert keys() == sorted([kept, lost])
    with clock.shifted(dt.timedelta(days=2)):
        assert draft_files_sweep().removed == [lost]
        assert draft_files_sweep().removed == []
    assert keys() == [kept]
