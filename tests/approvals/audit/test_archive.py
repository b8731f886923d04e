"""Retention and archive on PostgreSQL: a month whose workflows all finished longer ago
than their organisation's retention, and none on hold, goes to the archive store (gzip
JSON Lines and a signed manifest), is read back and checked, and only then leaves the
database; verify_audit then checks it from the archive; restore_archive brings it back
with every event and hash as it was. Refusals are said in words; a run killed between
writing and dropping is finished by the next one and loses nothing."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import ProgrammingError, connection, transaction

from approvals import clock
from approvals.audit import archive, offline_verify, retention
from approvals.audit.archive import archive_check, archive_names, month_archive
from approvals.audit.models import ArchivedMonth, LegalHold
from approvals.audit.restore import month_restore
from approvals.audit.retention import (
    ArchiveError,
    ArchiveRefused,
    hold_set,
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


def _old_month(subjects: tuple[str, ...] = ("R-1", "R-2", "R-3"), *, finish: bool = True) -> Any:
    """Workflows started (and, with ``finish``, finished) ``DAYS_AGO`` days ago: one
    approved a step, cancelled; the others cancelled."""
    alice = _user("alice")
    with clock.shifted(-dt.timedelta(days=DAYS_AGO)):
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
    # finished just now (outside the shift), kept for the default seven years
    assert len(reasons) == 2
    assert all("is kept until" in r and "(7 years after it finished)" in r for r in reasons)

    _one_year(acme)
    # they finished now, so one year keeps them too
    assert all("(1 year after it finished)" in r for r in month_refusals(month))
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
    client.create_bucket(Bucket=bucket)
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
