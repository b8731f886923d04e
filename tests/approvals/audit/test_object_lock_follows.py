"""The archive's S3 Object Lock follows the organisation's retention and legal holds,
against moto's S3 in server mode: a longer retention moves every archived object's
retain-until date to the new end, a shorter one leaves the locks and says so, a store
that refuses leaves the retention as it was; a legal hold on the organisation (or on an
archived request) puts the objects' legal hold ON, and lifting it puts it OFF. On the
local disk there is nothing to extend, and the words say so."""

from __future__ import annotations

import datetime as dt
from html import escape
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from approvals.audit import object_lock
from approvals.audit.archive import archive_names, month_archive, whole_seconds_up
from approvals.audit.models import ArchivedMonth, ArchivedWorkflow, LegalHold, RetentionPolicy
from approvals.audit.retention import (
    ArchiveError,
    hold_set,
    retention_change,
    retention_set,
    spans,
)
from approvals.audit.seal import seal_all
from approvals.models import Tenant, User
from tests.approvals.audit.test_archive import (  # noqa: F401
    _old_month,
    archive_root,
    locked_bucket,
)


def _years_on(at: dt.datetime, years: int) -> dt.datetime:
    return whole_seconds_up(at.replace(year=at.year + years))


def _heads(client: Any, bucket: str, acme: Tenant, month: dt.date) -> list[dict[str, Any]]:
    return [client.head_object(Bucket=bucket, Key=n) for n in archive_names(acme.pk, month)]


def _archived(acme: Tenant) -> tuple[dt.date, dt.datetime]:
    retention_set(tenant=acme, years=1, by="olga")
    month, _ = _old_month(("R-1", "R-2"))
    seal_all()
    assert month_archive(month).dropped
    last = ArchivedMonth.objects.get(tenant=acme, month=month).last_finished_at
    assert last is not None
    return month, last


@pytest.mark.django_db
def test_a_longer_retention_extends_the_locks_and_a_shorter_one_keeps_them(
    acme: Tenant,
    locked_bucket: tuple[Any, str],  # noqa: F811
) -> None:
    client, bucket = locked_bucket
    month, last = _archived(acme)
    assert [h["ObjectLockRetainUntilDate"] for h in _heads(client, bucket, acme, month)] == [
        _years_on(last, 1)
    ] * 2

    # three years: both objects' locks move to the new end, in the same mode
    change = retention_change(tenant=acme, years=3, by="olga")
    assert change.locks == object_lock.EXTENDED.format(n=2)
    heads = _heads(client, bucket, acme, month)
    assert [h["ObjectLockRetainUntilDate"] for h in heads] == [_years_on(last, 3)] * 2
    assert {h["ObjectLockMode"] for h in heads} == {"COMPLIANCE"}

    # the same again: nothing to move
    assert retention_change(tenant=acme, years=3, live_months=6, by="olga").locks == ""

    # two years: the locks stay at three, and it is said
    out = StringIO()
    call_command("set_retention", "--tenant", "acme", "--years", "2", "--by", "olga", stdout=out)
    assert object_lock.KEPT in out.getvalue()
    assert spans(acme.pk) == (2, 6)
    heads = _heads(client, bucket, acme, month)
    assert [h["ObjectLockRetainUntilDate"] for h in heads] == [_years_on(last, 3)] * 2

    # five years from the admin page: extended again, said on the page
    web = Client()
    web.force_login(User.objects.get(username="olga"))
    page = web.post("/admin/retention/", {"years": "5", "live_months": "6"}, follow=True)
    assert escape(object_lock.EXTENDED.format(n=2)) in page.content.decode()
    heads = _heads(client, bucket, acme, month)
    assert [h["ObjectLockRetainUntilDate"] for h in heads] == [_years_on(last, 5)] * 2


@pytest.mark.django_db
def test_a_store_that_refuses_leaves_the_retention_as_it_was(
    acme: Tenant,
    locked_bucket: tuple[Any, str],  # noqa: F811
    settings: Any,
) -> None:
    client, bucket = locked_bucket
    month, last = _archived(acme)
    before = RetentionPolicy.objects.filter(tenant=acme).values().get()
    archive = dict(settings.STORAGES["archive"])
    archive["OPTIONS"] = {**archive["OPTIONS"], "bucket_name": "no-such-bucket"}
    settings.STORAGES = {**settings.STORAGES, "archive": archive}
    with pytest.raises(
        ArchiveError, match="refused to open the bucket no-such-bucket .*nothing was changed"
    ):
        retention_change(tenant=acme, years=4, by="olga")
    assert RetentionPolicy.objects.filter(tenant=acme).values().get() == before
    with pytest.raises(ArchiveError, match="refused"):
        hold_set(by=User.objects.get(username="audrey"), reason="litigation")
    assert not LegalHold.objects.filter(tenant=acme).exists()
    heads = _heads(client, bucket, acme, month)
    assert [h["ObjectLockRetainUntilDate"] for h in heads] == [_years_on(last, 1)] * 2
    assert {h.get("ObjectLockLegalHoldStatus", "OFF") for h in heads} == {"OFF"}


@pytest.mark.django_db
def test_a_legal_hold_puts_the_objects_legal_hold_on_and_lifting_it_takes_it_off(
    acme: Tenant,
    locked_bucket: tuple[Any, str],  # noqa: F811
) -> None:
    client, bucket = locked_bucket
    month, _ = _archived(acme)
    audrey = User.objects.get(username="audrey")

    def statuses() -> set[str]:
        return {
            h.get("ObjectLockLegalHoldStatus", "OFF") for h in _heads(client, bucket, acme, month)
        }

    assert statuses() == {"OFF"}
    hold_set(by=audrey, reason="litigation: Acme v. Globex")
    assert statuses() == {"ON"}
    # a hold on one archived request of the month keeps it on once the organisation's goes
    entry = ArchivedWorkflow.objects.filter(tenant=acme, month=month, subject_id="R-1").get()
    wid = str(entry.workflow_id)
    hold_set(by=audrey, reason="the R-1 dispute", workflow_id=wid)
    hold_set(by=audrey, reason="settled", release=True)
    assert statuses() == {"ON"}
    hold_set(by=audrey, reason="R-1 settled", workflow_id=wid, release=True)
    assert statuses() == {"OFF"}


@pytest.mark.django_db
def test_on_the_local_disk_there_is_nothing_to_extend(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
) -> None:
    month, _ = _archived(acme)
    assert retention_change(tenant=acme, years=3, by="olga").locks == object_lock.LOCAL
    assert retention_change(tenant=acme, years=2, by="olga").locks == object_lock.LOCAL
    hold_set(by=User.objects.get(username="audrey"), reason="litigation")  # nothing to set
    assert (archive_root / archive_names(acme.pk, month)[0]).exists()
