"""The live index of archived workflows written (``ArchivedWorkflow``), and the
archived histories deleted once their retention has ended.

``month_index`` runs when one organisation's month is written to the archive store
(approvals.audit.archive), and again for every month already archived
(``index_backfill``, the ``index_archived`` command): one row per workflow with what its
pages and the search show, who may read it, and where its lines are in the month's
events file. It is safe to run again: the rows are written over.

``archived_delete_expired`` (a periodic job) deletes an organisation's archived month
from the store once every workflow of it is past retention (its organisation's, else
seven years after it finished) and none is on legal hold, and leaves each workflow's
index row as a tombstone: when, why, and the manifest's hash, so ``verify_audit`` tells
a history deleted by policy from one that went missing."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.core.files.storage import storages
from django.db import transaction

from .. import clock
from ..models import Tenant, User, Workflow, WorkflowParticipant, history_month
from ..runtime import tenant_scope
from ..runtime.archived import archived_in_place
from . import archive, retention  # archive imports this module: its names are read when called
from .archived import ALIAS
from .models import ArchivedMonth, ArchivedWorkflow

DELETED_REASON = (
    "its retention of {years} ended on {until:%d %B %Y} and no legal hold kept it; "
    "its archived events were deleted by policy"
)
NOT_RECORDED = "the archiver holds no record of this month: nothing is deleted"


@dataclass
class _Scan:
    """What the index needs of a month's events file, per workflow id."""

    ranges: dict[str, list[int]] = field(default_factory=dict)  # [first byte, end byte]
    last: dict[str, str] = field(default_factory=dict)  # its last event's time
    ids: dict[str, list[int]] = field(default_factory=dict)  # [first event id, last]
    deciders: dict[str, set[int]] = field(default_factory=dict)  # who decided, by user id


def _scan(data_name: str) -> _Scan:
    """Read the unpacked events file once: each workflow's byte range (its lines and
    the other workflows' lines between them), last time and deciders."""
    scan = _Scan()
    with (
        storages[ALIAS].open(data_name, "rb") as packed,
        gzip.GzipFile(fileobj=packed, mode="rb") as plain,
    ):
        at = 0
        for line in plain:
            if line.strip():
                row = json.loads(line)
                wid = row["workflow_id"]
                span = scan.ranges.setdefault(wid, [at, at])
                span[1] = at + len(line)
                scan.last[wid] = row["created_at"]
                if (event_id := row.get("event_id")) is not None:
                    scan.ids.setdefault(wid, [event_id, event_id])[1] = event_id
                if row["type"] == "DecisionRecorded" and row["actor_id"] is not None:
                    scan.deciders.setdefault(wid, set()).add(row["actor_id"])
            at += len(line)
    return scan


_BATCH = 1000


def _write_batch(batch: list[ArchivedWorkflow]) -> None:
    """Each row with everyone who took part (the read rule's participants), one query
    a batch."""
    if not batch:
        return
    taking_part: dict[str, list[int]] = {}
    for wid, user_id in WorkflowParticipant.objects.filter(
        tenant_id=batch[0].tenant_id, workflow_id__in=[e.workflow_id for e in batch]
    ).values_list("workflow_id", "user_id"):
        taking_part.setdefault(str(wid), []).append(user_id)
    for entry in batch:
        entry.participants = sorted(taking_part.get(str(entry.workflow_id), []))
    ArchivedWorkflow.objects.bulk_create(batch)


@tenant_scope.atomic_for_tenant_of("tenant")
def month_index(*, tenant: Tenant, month: dt.date, manifest: dict[str, Any]) -> int:
    """Index the workflows of ``tenant``'s archive of ``month`` (``manifest`` is its
    signed manifest); returns how many. The workflows' rows are read for what people
    see; the events file for where each one's lines are."""
    storage = storages[ALIAS]
    data_name, manifest_name = archive.archive_names(tenant.pk, month)
    with storage.open(manifest_name, "rb") as f:
        manifest_sha256 = hashlib.sha256(f.read()).hexdigest()
    scan = _scan(data_name)
    deciders = dict(
        User.objects.filter(pk__in={u for ids in scan.deciders.values() for u in ids}).values_list(
            "pk", "username"
        )
    )
    heads: dict[str, list[Any]] = manifest.get("heads") or {}
    indexed = ArchivedWorkflow.objects.filter(tenant_id=tenant.pk, month=month)
    if indexed.filter(deleted_at__isnull=False).exists():
        return 0  # deleted after its retention: the tombstones stay as they are
    # written again whole: a second run (or the backfill) leaves one row per workflow
    indexed.delete()
    first, after = retention.month_bounds(month)  # the month's workflows, as it reads them
    workflows = (
        Workflow.objects.filter(tenant_id=tenant.pk, created_at__gte=first, created_at__lt=after)
        .select_related("submitter")
        .order_by("created_at", "pk")
    )
    now = clock.now()
    batch: list[ArchivedWorkflow] = []
    for wf in workflows.iterator(chunk_size=_BATCH):
        wid = str(wf.pk)
        if wid not in heads:
            continue  # no events: nothing archived
        start, end = scan.ranges.get(wid, [0, 0])
        finished = scan.last.get(wid)
        first_id, last_id = scan.ids.get(wid, [None, None])
        submitter = wf.submitter
        batch.append(
            ArchivedWorkflow(
                tenant_id=tenant.pk,
                workflow_id=wf.pk,
                month=month,
                subject_type=wf.subject_type,
                subject_id=wf.subject_id,
                template_key=wf.template_key,
                template_version=wf.template_version,
                submitter_id=wf.submitter_id,
                submitter_name=(
                    (submitter.get_full_name() or submitter.username) if submitter else ""
                ),
                started_at=wf.created_at,
                finished_at=dt.datetime.fromisoformat(finished) if finished else None,
                status=wf.public_status,
                summary=wf.summary,
                amount_display=wf.amount_display,
                deciders=sorted(deciders[u] for u in scan.deciders.get(wid, set()) & set(deciders)),
                data_name=data_name,
                manifest_name=manifest_name,
                offset=start,
                length=end - start,
                first_event_id=first_id,
                last_event_id=last_id,
                events=heads[wid][0],
                head_seq=heads[wid][0],
                head_hash=heads[wid][1],
                manifest_sha256=manifest_sha256,
                indexed_at=now,
            )
        )
        if len(batch) == _BATCH:
            _write_batch(batch)
            batch = []
    _write_batch(batch)
    return indexed.count()


def index_backfill() -> dict[tuple[int, dt.date], int]:
    """Index every archived month whose manifest is in the store (the months archived
    before the index was kept); (tenant, month) -> workflows indexed. A month whose
    workflows are tombstones already is left as it is."""
    done: dict[tuple[int, dt.date], int] = {}
    storage = storages[ALIAS]
    for month in ArchivedMonth.objects.select_related("tenant").order_by("month", "tenant_id"):
        if ArchivedWorkflow.objects.filter(
            tenant_id=month.tenant_id, month=month.month, deleted_at__isnull=False
        ).exists():
            continue
        if not storage.exists(month.manifest_name):
            continue
        with storage.open(month.manifest_name, "rb") as f:
            manifest = json.loads(f.read())
        done[(month.tenant_id, month.month)] = month_index(
            tenant=month.tenant, month=month.month, manifest=manifest
        )
    return done


@dataclass
class DeletionResult:
    deleted: dict[tuple[int, dt.date], int] = field(default_factory=dict)  # workflows
    kept: dict[tuple[int, dt.date], list[str]] = field(default_factory=dict)  # why


def archived_delete_expired() -> DeletionResult:
    """Delete each organisation's archived month that retention lets go
    (``retention.deletable``: past its retention, held by none), leaving tombstones;
    say why the others are kept."""
    result = DeletionResult()
    now = clock.now()
    live = archived_in_place().filter(deleted_at__isnull=True)
    months = list(live.order_by("tenant_id", "month").values_list("tenant_id", "month").distinct())
    recorded = {
        (m.tenant_id, m.month): m
        for m in ArchivedMonth.objects.filter(tenant_id__in={t for t, _ in months})
    }
    for tenant_id, month in months:
        archived = recorded.get((tenant_id, month))
        if archived is None:  # indexed, but the archiver's record of the month is gone
            result.kept[(tenant_id, month)] = [NOT_RECORDED]
            continue
        kept = retention.deletable(archived, now=now)
        if kept:
            result.kept[(tenant_id, month)] = kept
            continue
        years = retention.retention_years(tenant_id)
        until = retention.kept_until(tenant_id, archived.last_finished_at or archived.written_at)
        result.deleted[(tenant_id, month)] = _delete_month(
            tenant_id, month, reason=DELETED_REASON.format(years=_years(years), until=until)
        )
    return result


def _years(n: int) -> str:
    return f"{n} year" if n == 1 else f"{n} years"


def _delete_month(tenant_id: int, month: dt.date, *, reason: str) -> int:
    """Tombstone the month's index rows, then delete its objects (a run stopped between
    the two leaves tombstones whose objects the next run finds gone: still deleted by
    policy, and deleted again)."""
    data_name, manifest_name = archive.archive_names(tenant_id, month)
    with transaction.atomic():
        count = ArchivedWorkflow.objects.filter(
            tenant_id=tenant_id, month=month, deleted_at__isnull=True
        ).update(
            deleted_at=clock.now(),
            deleted_reason=reason,
            data_name="",
            manifest_name="",
            offset=0,
            length=0,
        )
    storage = storages[ALIAS]
    for name in (data_name, manifest_name):
        if storage.exists(name):
            storage.delete(name)
    return count


TOMBSTONE_HEAD = (
    "deleted by policy on {at:%d %B %Y}, but its tombstone's chain head (event {seq}) is "
    "not the workflow's recorded head (event {version})"
)
DELETED_NOTE = (
    "{n} workflow(s) deleted by policy after their retention ended (tombstones kept, their "
    "archived events gone by design): {which}."
)


class DeletedHistory:
    """The workflows whose archived history was deleted by policy: ``verify_audit``
    sets them aside as it walks the workflows, checks each against its tombstone (the
    chain head the signed manifest held), and says how many, apart from failures."""

    def __init__(self, tenant: Tenant | None) -> None:
        deleted = ArchivedWorkflow.objects.filter(deleted_at__isnull=False)
        if tenant is not None:
            deleted = deleted.filter(tenant=tenant)
        self._deleted = deleted
        self.months = set(deleted.values_list("tenant_id", "month").distinct())
        self._loaded: dict[tuple[int, dt.date], dict[str, ArchivedWorkflow]] = {}
        self.found: list[tuple[Workflow, ArchivedWorkflow]] = []

    def holds(self, wf: Workflow) -> bool:
        if not self.months:
            return False
        key = (wf.tenant_id, history_month(wf.created_at))
        if key not in self.months:
            return False
        if key not in self._loaded:
            rows = self._deleted.filter(tenant_id=key[0], month=key[1])
            self._loaded[key] = {str(r.workflow_id): r for r in rows}
        entry = self._loaded[key].get(str(wf.pk))
        if entry is None:
            return False
        self.found.append((wf, entry))
        return True

    def problems(self) -> Iterator[tuple[str, str]]:
        """(workflow id, problem) for each tombstone that is not the workflow's head."""
        for wf, entry in self.found:
            if (wf.version, wf.last_hash) != (entry.head_seq, entry.head_hash):
                assert entry.deleted_at is not None
                yield (
                    str(wf.pk),
                    TOMBSTONE_HEAD.format(
                        at=entry.deleted_at, seq=entry.head_seq, version=wf.version
                    ),
                )

    def note(self) -> str | None:
        if not self.found:
            return None
        which = "; ".join(
            f"{e.subject_type} {e.subject_id} on {e.deleted_at:%d %B %Y}" for _, e in self.found[:5]
        )
        if len(self.found) > 5:
            which += f"; and {len(self.found) - 5} more"
        return DELETED_NOTE.format(n=len(self.found), which=which)
