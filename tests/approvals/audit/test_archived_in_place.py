"""Archived workflows read in place on PostgreSQL: once a month's events have left the
database for the archive store, its requests still answer on the API (the same answer
apart from ``archived``), on their page, in the search and in the audit export, through
the live index, for the same readers; every command on them is refused in words and
changes nothing; after retention the archived events are deleted and tombstones left,
which verify_audit tells apart from an archive that went missing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from approvals.audit import archived
from approvals.audit.archive import archive_names, month_archive
from approvals.audit.archived import ArchiveReadError, archived_rows
from approvals.audit.archived_index import archived_delete_expired, index_backfill
from approvals.audit.export import ExportFilter, audit_rows
from approvals.audit.models import ArchivedWorkflow
from approvals.audit.retention import hold_set, retention_set
from approvals.audit.seal import seal_all
from approvals.audit.verify import audit_verify
from approvals.models import Tenant, User, Workflow, WorkflowEvent
from approvals.runtime.archived import COMMAND_REFUSED, WORKFLOW_ARCHIVED
from tests.approvals.audit.test_archive import _old_month, archive_root  # noqa: F401

pytestmark: list[pytest.MarkDecorator] = []


def _detail(api: Any, who: str, wid: Any) -> Any:
    return api(who).get(f"/api/workflows/{wid}")


def _archived_now(acme: Tenant) -> tuple[dt.date, list[Workflow]]:
    retention_set(tenant=acme, years=1, by="olga")
    month, workflows = _old_month()
    seal_all()
    return month, workflows


def _export(acme: Tenant, **filters: Any) -> list[dict[str, Any]]:
    return list(audit_rows(tenant_id=acme.pk, filters=ExportFilter(**filters)))


@pytest.mark.django_db
def test_the_api_page_search_and_export_answer_the_same_once_archived(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
) -> None:
    # given three finished requests of a month past retention, read while live
    month, workflows = _archived_now(acme)
    first = workflows[0]
    readers = ("alice", "bob", "audrey")
    before = {(w, wf.pk): _detail(api, w, wf.pk).json() for w in readers for wf in workflows}
    assert all(body["archived"] is None for body in before.values())
    assert len(before[("alice", first.pk)]["history"]) >= 3
    export_before = _export(acme)
    subject_before = _export(acme, subject="R-1")
    person_before = _export(acme, person="bob")
    assert _detail(api, "ivan", first.pk).status_code == 404  # not a reader
    search = "/api/workflows?subjectId=R-1"
    search_before = api("alice").get(search).json()
    assert [w["workflowId"] for w in search_before["workflows"]] == [str(first.pk)]
    web = Client()
    web.force_login(User.objects.get(username="alice"))
    page_before = web.get(f"/workflows/{first.pk}").content.decode()
    auditor = Client()
    auditor.force_login(User.objects.get(username="audrey"))
    history_csv = reverse("workflow-history-export", args=[first.pk])
    csv_before = b"".join(auditor.get(history_csv).streaming_content).decode()
    assert len(csv_before.strip().splitlines()) == 1 + len(before[("alice", first.pk)]["history"])

    # when the month goes to the archive
    result = month_archive(month)
    assert result.dropped
    assert WorkflowEvent.objects.filter(history_month=month).count() == 0

    # then the index holds each workflow, with where its lines are
    rows = {str(r.workflow_id): r for r in ArchivedWorkflow.objects.filter(tenant=acme)}
    assert set(rows) == {str(w.pk) for w in workflows}
    entry = rows[str(first.pk)]
    assert (entry.subject_id, entry.template_key, entry.status) == (
        "R-1",
        "expense-approval",
        first.__class__.objects.get(pk=first.pk).public_status,
    )
    assert entry.submitter_name == "Alice" and entry.length > 0 and entry.head_seq >= 3
    assert entry.deciders == ["bob"] and entry.finished_at is not None
    assert User.objects.get(username="bob").pk in entry.participants

    # the API: the same answer for every reader, apart from the archived field
    for (who, wid), body in before.items():
        after = _detail(api, who, wid).json()
        marker = after.pop("archived")
        assert (
            marker["words"].startswith("Archived on ")
            and "read from the archive" in (marker["words"])
        )
        assert marker["deleted"] is False and marker["archivedAt"]
        body.pop("archived")
        assert after == body, who
    assert _detail(api, "ivan", first.pk).status_code == 404  # still not a reader

    # the search by reference, submitter, template, dates and status finds it
    assert api("alice").get(search).json() == search_before
    started = first.created_at
    for query in (
        "submitter=alice",
        "template=expense-approval",
        f"createdAfter={(started - dt.timedelta(days=1)).date()}"
        f"&createdBefore={(started + dt.timedelta(days=1)).date()}",
        f"status={before[('alice', first.pk)]['status']}",
        "decidedBy=bob",
    ):
        found = api("audrey").get(f"/api/workflows?{query}&limit=200").json()
        assert str(first.pk) in [w["workflowId"] for w in found["workflows"]], query

    # the export holds the archived events, as it did
    assert _export(acme) == export_before
    assert _export(acme, subject="R-1") == subject_before
    assert _export(acme, person="bob") == person_before
    assert {r["workflow_id"] for r in subject_before} == {str(first.pk)}
    # ... and the request's own history export, the auditor's download from its page
    assert b"".join(auditor.get(history_csv).streaming_content).decode() == csv_before

    # the request page shows the same history and says it is archived
    page = web.get(f"/workflows/{first.pk}").content.decode()
    assert 'id="archived"' in page and "read from the archive" in page
    assert 'id="archived"' not in page_before
    timeline = page_before[page_before.index("<ol") : page_before.index("</ol>")]
    assert timeline and timeline in page

    # verify_audit verifies it from the archive
    breaks, checked = audit_verify()
    assert breaks == [] and checked == Workflow.objects.count()


@pytest.mark.django_db
def test_every_command_on_an_archived_request_is_refused_in_words(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
) -> None:
    month, workflows = _archived_now(acme)
    wid = workflows[0].pk
    web = Client()
    web.force_login(User.objects.get(username="alice"))
    live_page = web.get(f"/workflows/{wid}").content.decode()
    month_archive(month)
    version = Workflow.objects.get(pk=wid).version
    attempts = [
        ("alice", f"/api/workflows/{wid}/comments", {"requestId": "c-9", "text": "One more"}),
        ("olga", f"/api/workflows/{wid}/cancel", {"requestId": "x-9", "reason": "tidy"}),
        ("bob", f"/api/workflows/{wid}/decisions", {"decision": "approve", "requestId": "d-9"}),
        ("erp", f"/api/workflows/{wid}/signals/contract_signed", {"requestId": "s-9"}),
    ]
    refused = 0
    for who, url, body in attempts:
        answer = api(who).post(url, body, format="json")
        if who == "erp" and answer.status_code in (403, 404):
            continue  # the integration may not signal this workflow template at all
        assert answer.status_code == 409, (url, answer.content)
        error = answer.json()["error"]
        assert error["code"] == WORKFLOW_ARCHIVED and error["message"] == COMMAND_REFUSED
        refused += 1
    assert refused >= 3
    # nothing changed: the row, and no event anywhere
    assert Workflow.objects.get(pk=wid).version == version
    assert not WorkflowEvent.objects.filter(workflow_id=wid).exists()
    # the page offers no comment and no file, as it did while live
    page = web.get(f"/workflows/{wid}").content.decode()
    for form in (f'action="/workflows/{wid}/comments"', f'action="/workflows/{wid}/files"'):
        assert form in live_page and form not in page, form


@pytest.mark.django_db
def test_an_archive_edited_after_it_was_signed_is_refused_in_words(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
) -> None:
    month, workflows = _archived_now(acme)
    month_archive(month)
    entry = ArchivedWorkflow.objects.get(workflow_id=workflows[0].pk)
    assert len(archived_rows(entry)) == entry.head_seq
    # the index's head is the signed manifest's; an edited head no longer matches
    entry.head_hash = "0" * 64
    with pytest.raises(ArchiveReadError, match="not the head the manifest signed"):
        archived_rows(entry)
    # a byte range that misses the workflow's lines is caught too
    entry.refresh_from_db()
    entry.length = 0
    with pytest.raises(ArchiveReadError, match="not the head the manifest signed"):
        archived_rows(entry)


@pytest.mark.django_db
def test_the_index_is_backfilled_from_the_manifests(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    month, workflows = _archived_now(acme)
    month_archive(month)
    kept = list(
        ArchivedWorkflow.objects.order_by("workflow_id").values_list(
            "workflow_id", "offset", "length", "head_hash", "manifest_sha256", "subject_id"
        )
    )
    ArchivedWorkflow.objects.all().delete()  # archived before the index was kept
    call_command("index_archived")
    assert "3 archived workflow(s) of 1 month(s) indexed." in capsys.readouterr().out
    again = list(
        ArchivedWorkflow.objects.order_by("workflow_id").values_list(
            "workflow_id", "offset", "length", "head_hash", "manifest_sha256", "subject_id"
        )
    )
    assert again == kept and len(kept) == 3
    assert index_backfill() == {(acme.pk, month): 3}  # again: written over, not doubled
    assert ArchivedWorkflow.objects.count() == 3


@pytest.mark.django_db
def test_after_retention_the_archive_is_deleted_and_verify_tells_policy_from_missing(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    month, workflows = _archived_now(acme)
    month_archive(month)
    data_name, manifest_name = archive_names(acme.pk, month)

    # within retention (one year after they finished, 400 days ago: past it; make it 7)
    retention_set(tenant=acme, years=7, by="olga")
    kept = archived_delete_expired()
    assert kept.deleted == {} and "is kept until" in kept.kept[(acme.pk, month)][0]
    assert (archive_root / data_name).exists()
    call_command("delete_expired_archives")
    said = capsys.readouterr().out
    assert f"{month:%B %Y} (organisation {acme.pk}) kept: {month:%B %Y} of Acme" in said, said
    assert (archive_root / data_name).exists()

    # past retention, but a legal hold on one workflow keeps the whole month's archive
    retention_set(tenant=acme, years=1, by="olga")
    hold = hold_set(
        by=User.objects.get(username="audrey"), reason="dispute", workflow_id=workflows[1].pk
    )
    assert hold.action == "hold"
    held = archived_delete_expired()
    assert held.deleted == {} and any("legal hold" in r for r in held.kept[(acme.pk, month)])
    assert (archive_root / data_name).exists()

    # the hold taken off: deleted, tombstones left
    hold_set(
        by=User.objects.get(username="audrey"),
        reason="settled",
        workflow_id=workflows[1].pk,
        release=True,
    )
    manifest_sha = ArchivedWorkflow.objects.get(workflow_id=workflows[0].pk).manifest_sha256
    done = archived_delete_expired()
    assert done.deleted == {(acme.pk, month): 3}
    assert not (archive_root / data_name).exists() and not (archive_root / manifest_name).exists()
    stone = ArchivedWorkflow.objects.get(workflow_id=workflows[0].pk)
    assert stone.deleted_at is not None and "retention of 1 year ended" in stone.deleted_reason
    assert stone.manifest_sha256 == manifest_sha and stone.head_hash and stone.data_name == ""

    # verify_audit: deleted by policy is no failure, and says so
    notes: list[str] = []
    breaks, checked = audit_verify(notes=notes)
    assert breaks == [] and checked == Workflow.objects.count()
    assert any("3 workflow(s) deleted by policy" in n for n in notes), notes
    call_command("verify_audit")
    assert "3 workflow(s) deleted by policy" in capsys.readouterr().out
    # the API says so too, with an empty history
    body = _detail(api, "alice", workflows[0].pk).json()
    assert body["archived"]["deleted"] is True and body["history"] == []
    assert body["archived"]["words"].startswith("Deleted on ")

    # a tombstone whose head is not the workflow's is a failure
    ArchivedWorkflow.objects.filter(pk=stone.pk).update(head_hash="f" * 64)
    breaks, _ = audit_verify()
    assert [b.workflow_id for b in breaks] == [str(workflows[0].pk)]
    assert "tombstone's chain head" in breaks[0].what


@pytest.mark.django_db
def test_an_archive_that_went_missing_is_a_failure_not_a_deletion(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
) -> None:
    month, workflows = _archived_now(acme)
    month_archive(month)
    data_name, _ = archive_names(acme.pk, month)
    (archive_root / data_name).unlink()  # gone, and no tombstone says why

    notes: list[str] = []
    breaks, _ = audit_verify(notes=notes)
    assert any("its events file is gone" in str(b) for b in breaks), breaks
    assert not any("deleted by policy" in n for n in notes)
    entry = ArchivedWorkflow.objects.get(workflow_id=workflows[0].pk)
    with pytest.raises(ArchiveReadError, match="its events file is gone"):
        archived.archived_rows(entry)


@pytest.mark.django_db
def test_a_restored_month_is_read_from_the_database_again(
    acme: Tenant,
    archive_root: Path,  # noqa: F811
    api: Any,
) -> None:
    month, workflows = _archived_now(acme)
    month_archive(month)
    assert _detail(api, "alice", workflows[0].pk).json()["archived"] is not None
    call_command("restore_archive", "--month", f"{month:%Y-%m}")
    body = _detail(api, "alice", workflows[0].pk).json()
    assert body["archived"] is None and len(body["history"]) >= 3
    # and a command is no longer refused as archived (it is refused as finished)
    answer = api("alice").post(
        f"/api/workflows/{workflows[0].pk}/cancel", {"requestId": "x-10"}, format="json"
    )
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] != WORKFLOW_ARCHIVED
