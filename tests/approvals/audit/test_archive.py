"""Live window, retention and archive on PostgreSQL: a month whose workflows all finished
longer ago than their organisation's live window, and none on hold, goes to the archive
store (gzip JSON Lines and a signed manifest, read-only on disk, under Object Lock on
S3), is read back and checked, and only then leaves the database; verify_audit then
checks it from the archive; restore_archive brings it back with every event and hash as
it was. Retention decides when an archived month may be deleted. Refusals are said in
words; a run killed between writing and dropping is finished by the next one and loses
nothing; so is the periodic job, killed anywhere."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import ProgrammingError, connection, transaction

from approvals import clock
from approvals.audit import archive, offline_verify, retention
from approvals.audit.archive import (
    archive_check,
    archive_names,
    month_archive,
    whole_seconds_up,
)
from approvals.audit.archive_job import JOB_LOCK, months_archive_due
from approvals.audit.models import ArchivedMonth, LegalHold
from approvals.audit.restore import month_restore
from approvals.audit.retention import (
    ArchiveError,
    ArchiveRefused,
    deletable,
    hold_set,
    kept_until,
    live_months,
    month_refusals,
    retention_set,
    retention_years,
)
from approvals.audit.seal import seal_all
from approvals.audit.verify import audit_verify
from approvals.models import Tenant, User, Workflow, WorkflowEvent, history_month
from approvals.runtime.partitions import (
    history_partitions,
    history_partitions_ensure,
    partition_name,
)
from approvals.services.workflows import workflow_cancel, workflow_decide, workflow_start
from approvals.workers import tasks
from config.storage import archive_storage
from tests.approvals.test_s3_attachments import KEYS, s3_endpoint  # noqa: F401

pytestmark = []

# About thirteen months back: past a one-year retention, well within seven years.
DAYS_AGO = 400
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def archive_root(tmp_path: Path, settings: Any) -> Path:
    root = tmp_path / "archive"
    settings.STORAGES = {
        **settings.STORAGES,
        "archive": archive_storage({"APPROVALS_ARCHIVE_ROOT": str(root)}, "/nonexistent"),
    }
    return root


def _user(name: str) -> User:
    return User.objects.get(username=name)


def _old_month(
    subjects: tuple[str, ...] = ("R-1", "R-2", "R-3"),
    *,
    finish: bool = True,
    days_ago: int = DAYS_AGO,
) -> Any:
    """Workflows started (and, with ``finish``, finished) ``days_ago`` days ago: one
    approved a step, cancelled; the others cancelled."""
    alice = _user("alice")
    with clock.shifted(-dt.timedelta(days=days_ago)):
        history_partitions_ensure(months_ahead=0)
        workflows = []
        for subject in subjects:
            started = workflow_start(
                submitter=alice,
                template_key="expense-approval",
                subject_type="expense",
                subject_id=subject,
                data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
            )
            workflows.append(Workflow.objects.get(pk=started.workflow_id))
        workflow_decide(
            user=_user("bob"),
            workflow_id=workflows[0].pk,
            decision="approve",
            request_id=f"bob-{subjects[0]}",
        )
        if finish:
            for wf in workflows:
                workflow_cancel(
                    user=alice, workflow_id=wf.pk, reason="withdrawn", request_id=f"c-{wf.pk}"
                )
    month = history_month(workflows[0].created_at)
    return month, workflows


def _events(month: dt.date) -> list[tuple[Any, ...]]:
    return list(
        WorkflowEvent.objects.filter(history_month=month)
        .order_by("id")
        .values_list("id", "workflow_id", "seq", "type", "payload", "created_at", "hash")
    )


def _one_year(acme: Tenant) -> None:
    retention_set(tenant=acme, years=1, by="olga")


@pytest.mark.django_db
def test_archive_round_trip_verify_from_the_archive_and_restore(
    acme: Tenant, archive_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_year(acme)
    month, workflows = _old_month()
    seal_all()
    before = _events(month)
    assert len(before) >= 7
    assert audit_verify() == ([], Workflow.objects.count())

    call_command("archive_history", "--month", f"{month:%Y-%m}")
    call_command("archive_history", "--month", f"{month:%Y-%m}", "--dry-run")
    assert "is already archived" in capsys.readouterr().out

    # the partition is gone, the workflows stay, and the archive holds every event
    assert partition_name(month) not in history_partitions()
    assert WorkflowEvent.objects.filter(history_month=month).count() == 0
    assert Workflow.objects.filter(pk__in=[w.pk for w in workflows]).count() == 3
    data_name, manifest_name = archive_names(acme.pk, month)
    manifest = json.loads((archive_root / manifest_name).read_text())
    assert manifest["events"] == len(before)
    assert manifest["workflows"] == 3
    assert manifest["first_hash"] == before[0][-1] and manifest["last_hash"] == before[-1][-1]
    assert manifest["heads"] == {
        str(w.pk): [w2.version, w2.last_hash]
        for w in workflows
        for w2 in [Workflow.objects.get(pk=w.pk)]
    }
    assert ArchivedMonth.objects.get(tenant=acme, month=month).dropped_at is not None
    # the archive is an export: the standard-library verifier checks it unpacked
    plain = archive_root / "plain.jsonl"
    plain.write_bytes(gzip.decompress((archive_root / data_name).read_bytes()))
    report = offline_verify.verify_export(str(plain), jobs=1, extra_columns=("event_id",))
    assert report.ok and report.events == len(before), report.summary()

    # verify_audit checks the month from the archive
    breaks, checked = audit_verify()
    assert breaks == [] and checked == Workflow.objects.count()

    # ... and finds an archive edited after it was signed
    tampered = json.loads((archive_root / manifest_name).read_text())
    tampered["events"] += 1
    (archive_root / manifest_name).write_text(json.dumps(tampered))
    breaks, _ = audit_verify()
    assert any("signature does not verify" in str(b) for b in breaks), breaks
    with pytest.raises(ArchiveError, match="nothing was restored"):
        month_restore(month)
    (archive_root / manifest_name).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    # ... and an events file swapped for another
    packed = (archive_root / data_name).read_bytes()
    edited = plain.read_text().replace('"decision":"approve"', '"decision":"reject"', 1)
    assert edited != plain.read_text()
    (archive_root / data_name).write_bytes(gzip.compress(edited.encode()))
    breaks, _ = audit_verify()
    assert any("not the one the manifest signs" in str(b) for b in breaks), breaks
    (archive_root / data_name).write_bytes(packed)

    call_command("restore_archive", "--month", f"{month:%Y-%m}")
    assert _events(month) == before
    assert partition_name(month) in history_partitions()
    assert audit_verify() == ([], Workflow.objects.count())
    assert ArchivedMonth.objects.get(tenant=acme, month=month).dropped_at is None
    with pytest.raises(CommandError, match="is not archived: its events are in the database"):
        call_command("restore_archive", "--month", f"{month:%Y-%m}")
    assert _events(month) == before

    # archived again, nothing needs writing a second time
    again = month_archive(month)
    assert again.dropped and again.written == [] and again.events == len(before)


@pytest.mark.django_db
def test_a_month_is_refused_in_words_while_running_within_retention_or_on_hold(
    acme: Tenant, archive_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    month, workflows = _old_month(("R-1", "R-2"), finish=False)

    with pytest.raises(ArchiveRefused) as refused:
        month_archive(month)
    assert "expense R-1" in str(refused.value) and "is still running" in str(refused.value)
    # a month of many reasons keeps the first ones and counts the rest
    monkeypatch.setattr(retention, "REFUSALS_KEPT", 1)
    kept = month_refusals(month)
    assert len(kept) == 2 and "expense R-1" in kept[0] and kept[1] == "and 1 more"
    monkeypatch.undo()

    for wf in workflows:
        workflow_cancel(
            user=_user("alice"), workflow_id=wf.pk, reason="done", request_id=f"x-{wf.pk}"
        )
    reasons = month_refusals(month)
    # finished just now (outside the shift): live for the default twelve months
    assert len(reasons) == 2
    assert all(
        "stays live until" in r and "(its organisation's live window of 12 months)" in r
        for r in reasons
    )

    retention_set(tenant=acme, live_months=1, by="olga")
    # they finished now, so one month keeps them too
    assert all("live window of 1 month)" in r for r in month_refusals(month))
    with clock.shifted(dt.timedelta(days=400)):
        assert month_refusals(month) == []
        hold_set(by=_user("audrey"), reason="Tax inquiry 2025/17", workflow_id=workflows[1].pk)
        hold_set(by=_user("olga"), reason="Litigation hold: supplier dispute")
        reasons = month_refusals(month)
        assert any("Tax inquiry 2025/17" in r and "expense R-2" in r for r in reasons)
        assert any("Litigation hold: supplier dispute" in r for r in reasons)
        with pytest.raises(CommandError, match="cannot be archived yet"):
            call_command("archive_history", "--month", f"{month:%Y-%m}")
        # a release written without the seal key releases nothing
        forged = LegalHold(
            tenant=acme, action=LegalHold.RELEASE, by="olga", at=clock.now(), reason="x"
        )
        forged.key_id, forged.signature = "0" * 16, "0" * 64
        forged.save()
        assert any("Litigation hold" in r for r in month_refusals(month))
        call_command("legal_hold", "--by", "olga", "--reason", "Dispute settled", "--release")
        hold_set(
            by=_user("audrey"), reason="Inquiry closed", workflow_id=workflows[1].pk, release=True
        )
        assert month_refusals(month) == []
    # nothing moved
    assert partition_name(month) in history_partitions()
    assert not ArchivedMonth.objects.exists()
    assert LegalHold.objects.count() == 5


@pytest.mark.django_db
def test_bad_requests_are_refused_in_words_and_change_nothing(
    acme: Tenant, archive_root: Path
) -> None:
    with pytest.raises(CommandError, match="YYYY-MM, such as 2019-03"):
        call_command("archive_history", "--month", "March 2019")
    with pytest.raises(CommandError, match="has not ended yet"):
        call_command("archive_history", "--month", f"{clock.now():%Y-%m}")
    with pytest.raises(CommandError, match="nothing to do"):
        call_command("archive_history", "--month", "1999-01")
    # a month whose events went to the default partition (its own was never made)
    with clock.shifted(-dt.timedelta(days=800)):
        started = workflow_start(
            submitter=_user("alice"),
            template_key="expense-approval",
            subject_type="expense",
            subject_id="R-default",
            data={"amountPaise": 100, "currency": "INR", "department": "eng"},
        )
    lost = history_month(Workflow.objects.get(pk=started.workflow_id).created_at)
    assert partition_name(lost) not in history_partitions()
    with pytest.raises(CommandError, match="its events are in the default partition"):
        call_command("archive_history", "--month", f"{lost:%Y-%m}")
    with pytest.raises(CommandError, match="no archive to restore"):
        call_command("restore_archive", "--month", "1999-01")
    with pytest.raises(ArchiveError, match="Only an auditor or an organisation admin"):
        hold_set(by=_user("alice"), reason="because")
    with pytest.raises(ArchiveError, match="needs a reason"):
        hold_set(by=_user("audrey"), reason="  ")
    with pytest.raises(ArchiveError, match="not one of your organisation's"):
        hold_set(by=_user("audrey"), reason="x", workflow_id="not-a-workflow")
    with pytest.raises(CommandError, match="No active person signs in as 'nobody'"):
        call_command("legal_hold", "--by", "nobody", "--reason", "x")
    with pytest.raises(CommandError, match="Only an auditor or an organisation admin"):
        call_command("legal_hold", "--by", "bob", "--reason", "x")
    with pytest.raises(CommandError, match="from 1 to 100"):
        call_command("set_retention", "--tenant", "acme", "--years", "0", "--by", "olga")
    with pytest.raises(CommandError, match="No organisation with the slug 'nope'"):
        call_command("set_retention", "--tenant", "nope", "--years", "9", "--by", "olga")
    assert retention_years(acme.pk) == 7
    call_command("set_retention", "--tenant", "acme", "--years", "10", "--by", "olga")
    assert retention_years(acme.pk) == 10
    assert not LegalHold.objects.exists() and not ArchivedMonth.objects.exists()
    # a second run of the same month waits for none: it is refused while one holds it
    import psycopg

    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    ) as other:
        other.execute("SELECT pg_advisory_lock(hashtext('archive:1999-01-01'))")
        with pytest.raises(ArchiveError, match="Another run is archiving or restoring"):
            month_archive(dt.date(1999, 1, 1))
    # a hold is append-only
    hold = hold_set(by=_user("audrey"), reason="Audit")
    with pytest.raises(ProgrammingError, match="append-only"), transaction.atomic():
        LegalHold.objects.filter(pk=hold.pk).update(reason="nothing")
    with pytest.raises(ProgrammingError, match="append-only"), transaction.atomic():
        LegalHold.objects.filter(pk=hold.pk).delete()


@pytest.mark.django_db
def test_a_dry_run_says_what_would_go_and_changes_nothing(
    acme: Tenant, archive_root: Path, capsys: Any
) -> None:
    _one_year(acme)
    month, _ = _old_month(("R-1",))
    before = _events(month)
    call_command("archive_history", "--month", f"{month:%Y-%m}", "--dry-run")
    assert f"{len(before)} event(s) of 1 organisation(s)" in capsys.readouterr().out
    assert _events(month) == before and not ArchivedMonth.objects.exists()
    assert not archive_root.exists() or not any(archive_root.rglob("*.gz"))


def _archiver(month: dt.date, root: Path, kill_at: str | None) -> subprocess.CompletedProcess[str]:
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "APPROVALS_ARCHIVE_ROOT": str(root),
        "APPROVALS_AUDIT_SEAL_KEY": django_settings.APPROVALS_AUDIT_SEAL_KEY,
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("APPROVALS_ARCHIVE_KILL_AT", None)
    if kill_at:
        env["APPROVALS_ARCHIVE_KILL_AT"] = kill_at
    return subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "archive_history", "--month", f"{month:%Y-%m}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "step",
    [
        "data-written",
        "verified",
        "detached",
        pytest.param("written", marks=pytest.mark.slow),
        pytest.param("dropped", marks=pytest.mark.slow),
    ],
)
def test_the_archiver_killed_between_writing_and_dropping_loses_nothing(
    acme: Tenant, tmp_path: Path, settings: Any, step: str
) -> None:
    root = tmp_path / "archive"
    settings.STORAGES = {
        **settings.STORAGES,
        "archive": archive_storage({"APPROVALS_ARCHIVE_ROOT": str(root)}, "/nonexistent"),
    }
    _one_year(acme)
    month, _ = _old_month()
    seal_all()
    before = _events(month)

    killed = _archiver(month, root, step)
    assert killed.returncode == -9, killed.stderr  # SIGKILL
    assert "archived" not in killed.stdout
    if step in ("detached", "dropped"):
        assert WorkflowEvent.objects.filter(history_month=month).count() == 0  # detached
    else:
        assert _events(month) == before  # still live

    rerun = _archiver(month, root, None)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(before)} event(s) of 1 organisation(s)" in rerun.stdout
    assert partition_name(month) not in history_partitions()
    check = archive_check(acme.pk, month)
    assert check.ok, check.problems
    assert check.manifest["events"] == len(before)
    assert audit_verify() == ([], Workflow.objects.count())

    month_restore(month)
    assert _events(month) == before
    assert audit_verify() == ([], Workflow.objects.count())


@pytest.mark.topology
@pytest.mark.django_db
def test_archive_round_trip_through_an_s3_compatible_store(
    acme: Tenant,
    s3_endpoint: str,  # noqa: F811
    settings: Any,
) -> None:
    boto3 = pytest.importorskip("boto3")

    bucket = "approvals-archive"
    client = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"],
    )
    client.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    environ = {
        "APPROVALS_ARCHIVE_S3_BUCKET": bucket,
        "APPROVALS_ARCHIVE_S3_ENDPOINT_URL": s3_endpoint,
        "APPROVALS_ARCHIVE_S3_REGION": "us-east-1",
        "APPROVALS_ARCHIVE_S3_PREFIX": "approvals",
        **KEYS,
    }
    storage = archive_storage(environ, "/nonexistent")
    assert storage["BACKEND"] == "storages.backends.s3.S3Storage"
    settings.STORAGES = {**settings.STORAGES, "archive": storage}
    _one_year(acme)
    month, _ = _old_month()
    seal_all()
    before = _events(month)

    result = month_archive(month)

    assert result.dropped and result.events == len(before)
    listed = client.list_objects_v2(Bucket=bucket)["Contents"]
    data_name, manifest_name = archive_names(acme.pk, month)
    assert sorted(o["Key"] for o in listed) == [
        f"approvals/{data_name}",
        f"approvals/{manifest_name}",
    ]
    body = client.get_object(Bucket=bucket, Key=f"approvals/{data_name}")["Body"].read()
    lines = gzip.decompress(body).decode().splitlines()
    assert [json.loads(line)["hash"] for line in lines] == [e[-1] for e in before]
    assert audit_verify() == ([], Workflow.objects.count())

    month_restore(month)
    assert _events(month) == before
    assert audit_verify() == ([], Workflow.objects.count())


@pytest.mark.django_db
def test_a_hold_put_while_the_archive_is_written_keeps_the_month(
    acme: Tenant, archive_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_year(acme)
    month, workflows = _old_month(("R-1",))
    before = _events(month)

    def hold_meanwhile(name: str) -> None:
        if name == "verified":
            hold_set(by=_user("audrey"), reason="Subpoena 42", workflow_id=workflows[0].pk)

    monkeypatch.setattr(archive, "_step", hold_meanwhile)
    with pytest.raises(ArchiveRefused, match="Subpoena 42"):
        month_archive(month)
    assert partition_name(month) in history_partitions()
    assert _events(month) == before


# -- the live window and retention -------------------------------------------------------


@pytest.mark.django_db
def test_a_month_past_the_live_window_goes_though_within_retention(
    acme: Tenant, archive_root: Path
) -> None:
    # given: the defaults, a twelve-month live window and seven years of retention;
    # workflows finished about thirteen months ago
    assert (retention_years(acme.pk), live_months(acme.pk)) == (7, 12)
    month, workflows = _old_month(("R-1", "R-2"))
    last = max(
        WorkflowEvent.objects.filter(history_month=month).values_list("created_at", flat=True)
    )

    # when: a fourteen-month window keeps them, twelve lets them go
    retention_set(tenant=acme, live_months=14, by="olga")
    reasons = month_refusals(month)
    assert len(reasons) == 2 and all("live window of 14 months" in r for r in reasons)
    retention_set(tenant=acme, live_months=12, by="olga")
    assert month_refusals(month) == []
    result = month_archive(month)

    # then: archived within retention, and its retention counted from the last finish
    assert result.dropped
    archived = ArchivedMonth.objects.get(tenant=acme, month=month)
    assert archived.last_finished_at == last
    assert kept_until(acme.pk, last) == last.replace(year=last.year + 7)
    reasons = deletable(archived)
    assert len(reasons) == 1 and "is kept until" in reasons[0] and "(7 years after" in reasons[0]
    with clock.shifted(dt.timedelta(days=7 * 366)):
        assert deletable(archived) == []
        hold_set(by=_user("audrey"), reason="Subpoena 7", workflow_id=workflows[1].pk)
        assert any("Subpoena 7" in r and "expense R-2" in r for r in deletable(archived))
        hold_set(by=_user("olga"), reason="Litigation: all of it")
        assert any("Litigation: all of it" in r for r in deletable(archived))
    # a month still live is not deletable, whatever its age
    month_restore(month)
    archived.refresh_from_db()
    with clock.shifted(dt.timedelta(days=8 * 366)):
        assert any("is still in the live database" in r for r in deletable(archived))


@pytest.mark.django_db
def test_a_bad_live_window_is_refused_in_words_and_changes_nothing(acme: Tenant) -> None:
    retention_set(tenant=acme, years=2, live_months=18, by="olga")
    for years, window, message in [
        (None, 0, "from 1 to the retention (24 months)"),
        (None, 25, "from 1 to the retention (24 months)"),
        (1, None, "from 1 to the retention (12 months)"),  # the window would pass it
        (0, None, "from 1 to 100"),
    ]:
        with pytest.raises(ArchiveError, match=re.escape(message)):
            retention_set(tenant=acme, years=years, live_months=window, by="mallory")
    with pytest.raises(CommandError, match="from 1 to the retention"):
        call_command("set_retention", "--tenant", "acme", "--live-months", "-3", "--by", "x")
    with pytest.raises(CommandError, match="Say what to set"):
        call_command("set_retention", "--tenant", "acme", "--by", "x")
    assert (retention_years(acme.pk), live_months(acme.pk)) == (2, 18)
    out = StringIO()
    call_command(
        "set_retention", "--tenant", "acme", "--live-months", "20", "--by", "olga", stdout=out
    )
    assert "2 year(s) after it finishes, 20 month(s) of it in the live database" in out.getvalue()
    assert (retention_years(acme.pk), live_months(acme.pk)) == (2, 20)


# -- the archive's objects: read-only on disk, under Object Lock on S3 -------------------


@pytest.mark.django_db
def test_archive_files_on_disk_are_read_only_and_written_again_when_needed(
    acme: Tenant, archive_root: Path
) -> None:
    month, _ = _old_month(("R-1",))
    before = _events(month)
    month_archive(month)
    names = archive_names(acme.pk, month)
    assert [stat.S_IMODE((archive_root / n).stat().st_mode) for n in names] == [0o444, 0o444]

    # a manifest lost: restored, the month is written again over the read-only files
    month_restore(month)
    (archive_root / names[1]).unlink()
    again = month_archive(month)
    assert again.written == [acme.pk] and again.dropped
    assert [stat.S_IMODE((archive_root / n).stat().st_mode) for n in names] == [0o444, 0o444]
    month_restore(month)
    assert _events(month) == before


@pytest.fixture
def locked_bucket(settings: Any) -> Iterator[tuple[Any, str]]:
    """moto's S3 in server mode on a loopback port, a bucket with Object Lock enabled,
    and the archive store pointed at it as the environment would configure it."""
    boto3 = pytest.importorskip("boto3")
    from moto.server import ThreadedMotoServer

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"],
        )
        bucket = "approvals-archive-locked"
        client.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
        environ = {
            "APPROVALS_ARCHIVE_S3_BUCKET": bucket,
            "APPROVALS_ARCHIVE_S3_ENDPOINT_URL": endpoint,
            "APPROVALS_ARCHIVE_S3_REGION": "us-east-1",
            **KEYS,
        }
        settings.STORAGES = {**settings.STORAGES, "archive": archive_storage(environ, "/x")}
        yield client, bucket
    finally:
        server.stop()


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["COMPLIANCE", "GOVERNANCE"])
def test_archive_objects_on_s3_are_locked_until_retention_ends(
    acme: Tenant, locked_bucket: tuple[Any, str], settings: Any, mode: str
) -> None:
    from botocore.exceptions import ClientError  # type: ignore[import-untyped]

    client, bucket = locked_bucket
    settings.APPROVALS_ARCHIVE_OBJECT_LOCK_MODE = mode
    month, _ = _old_month(("R-1", "R-2"))
    seal_all()
    before = _events(month)
    last = max(e[5] for e in before)

    assert month_archive(month).dropped

    until = whole_seconds_up(kept_until(acme.pk, last))
    assert until - last >= dt.timedelta(days=7 * 365)
    for name in archive_names(acme.pk, month):
        # (moto's GetObjectRetention answers 500 in server mode; HEAD carries the lock)
        head = client.head_object(Bucket=bucket, Key=name)
        version = head["VersionId"]
        assert head["ObjectLockMode"] == mode
        assert head["ObjectLockRetainUntilDate"] == until
        # deleting the locked version before its date fails, and the version stays
        with pytest.raises(ClientError, match="AccessDenied"):
            client.delete_object(Bucket=bucket, Key=name, VersionId=version)
        kept = client.head_object(Bucket=bucket, Key=name, VersionId=version)
        assert kept["VersionId"] == version
    assert audit_verify() == ([], Workflow.objects.count())
    month_restore(month)
    assert _events(month) == before


@pytest.mark.django_db
def test_a_bucket_without_object_lock_keeps_the_month_live(
    acme: Tenant, locked_bucket: tuple[Any, str], settings: Any
) -> None:
    client, _ = locked_bucket
    client.create_bucket(Bucket="no-lock")
    options = settings.STORAGES["archive"]["OPTIONS"]
    settings.STORAGES = {
        **settings.STORAGES,
        "archive": {
            **settings.STORAGES["archive"],
            "OPTIONS": {**options, "bucket_name": "no-lock"},
        },
    }
    month, _ = _old_month(("R-1",))
    before = _events(month)
    with pytest.raises(ArchiveError, match="must have Object Lock enabled"):
        month_archive(month)
    assert _events(month) == before
    assert partition_name(month) in history_partitions()
    assert not ArchivedMonth.objects.exists()


# -- the periodic job --------------------------------------------------------------------


def _two_months() -> tuple[dt.date, dt.date]:
    older, _ = _old_month(("J-1", "J-2"), days_ago=460)
    newer, _ = _old_month(("J-3",), days_ago=400)
    assert older < newer
    return older, newer


@pytest.mark.django_db
def test_the_job_archives_due_months_keeps_held_ones_and_runs_once_at_a_time(
    acme: Tenant, archive_root: Path
) -> None:
    older, newer = _two_months()
    held = Workflow.objects.get(subject_id="J-3")
    recent, _ = _old_month(("J-4",), days_ago=100)  # within the live window
    before = {m: _events(m) for m in (older, newer, recent)}
    hold_set(by=_user("audrey"), reason="Tax inquiry 2026/3", workflow_id=held.pk)

    # another run holds the job: this one does nothing
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"], autocommit=True
    ) as other:
        other.execute("SELECT pg_advisory_lock(hashtext(%s))", [JOB_LOCK])
        assert months_archive_due().busy
    assert {m: _events(m) for m in before} == before

    run = months_archive_due()
    assert run.archived == [older] and not run.busy
    assert any("Tax inquiry 2026/3" in r for r in run.kept[newer])
    assert recent not in run.kept  # not looked at: younger than any live window
    assert partition_name(older) not in history_partitions()
    assert _events(newer) == before[newer] and _events(recent) == before[recent]

    # the hold lifted, the next run (the Celery task) takes the month
    hold_set(by=_user("audrey"), reason="Closed", workflow_id=held.pk, release=True)
    assert tasks.archive_history() == 1
    assert partition_name(newer) not in history_partitions()
    assert _events(recent) == before[recent]
    assert months_archive_due().archived == []


def _job(root: Path, kill_at: str | None) -> subprocess.CompletedProcess[str]:
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "APPROVALS_ARCHIVE_ROOT": str(root),
        "APPROVALS_AUDIT_SEAL_KEY": django_settings.APPROVALS_AUDIT_SEAL_KEY,
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("APPROVALS_ARCHIVE_KILL_AT", None)
    if kill_at:
        env["APPROVALS_ARCHIVE_KILL_AT"] = kill_at
    code = "from approvals.workers.tasks import archive_history; print(archive_history())"
    return subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _live_or_archived(tenant_id: int, month: dt.date, before: list[Any]) -> str:
    """Each month is whole in exactly one place a reader can use: its events live, or
    (detached, dropped) a complete archive that checks out; never lost."""
    live = _events(month)
    if live:
        assert live == before
        return "live"
    check = archive_check(tenant_id, month)
    assert check.ok, check.problems
    assert check.manifest["events"] == len(before)
    return "archived"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("step", ["data-written", "written", "verified", "detached", "dropped"])
def test_the_job_killed_anywhere_leaves_each_month_live_or_archived_once(
    acme: Tenant, tmp_path: Path, settings: Any, step: str
) -> None:
    root = tmp_path / "archive"
    settings.STORAGES = {
        **settings.STORAGES,
        "archive": archive_storage({"APPROVALS_ARCHIVE_ROOT": str(root)}, "/nonexistent"),
    }
    older, newer = _two_months()
    seal_all()
    before = {m: _events(m) for m in (older, newer)}

    # when: the job's process is killed at a step of its first month
    killed = _job(root, step)
    assert killed.returncode == -9, killed.stderr  # SIGKILL

    # then: the first month is whole in one place, the second untouched and live
    assert _live_or_archived(acme.pk, older, before[older]) == (
        "archived" if step in ("detached", "dropped") else "live"
    )
    assert _live_or_archived(acme.pk, newer, before[newer]) == "live"

    # a second run finishes both, without writing a month twice
    rerun = _job(root, None)
    assert rerun.returncode == 0, rerun.stderr
    # (killed past "dropped", the first month was done: the rerun has one left)
    assert rerun.stdout.strip().splitlines()[-1] == ("1" if step == "dropped" else "2")
    for month in (older, newer):
        assert partition_name(month) not in history_partitions()
        assert _live_or_archived(acme.pk, month, before[month]) == "archived"
        assert ArchivedMonth.objects.filter(month=month).count() == 1
        assert ArchivedMonth.objects.get(month=month).dropped_at is not None
    assert [p.name for p in root.rglob("*")].count("manifest.json") == 2
    assert audit_verify() == ([], Workflow.objects.count())
    # the next run finds nothing to do
    assert _job(root, None).stdout.strip().splitlines()[-1] == "0"
    for month in (older, newer):
        month_restore(month)
        assert _events(month) == before[month]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"APPROVALS_LIVE_MONTHS": "0"}, "APPROVALS_LIVE_MONTHS must be from 1 to the retention"),
        (
            {"APPROVALS_LIVE_MONTHS": "13", "APPROVALS_RETENTION_YEARS": "1"},
            "(12 months), got 13",
        ),
        (
            {"APPROVALS_ARCHIVE_OBJECT_LOCK_MODE": "compliance-ish"},
            "APPROVALS_ARCHIVE_OBJECT_LOCK_MODE must be COMPLIANCE or GOVERNANCE",
        ),
    ],
)
def test_a_bad_live_window_or_lock_mode_setting_stops_the_start_in_words(
    env: dict[str, str], message: str
) -> None:
    done = subprocess.run(  # noqa: S603
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert message in done.stderr, done.stderr
