"""Archive: a month of history written out of the database, kept sealed in the archive
store, read back, and only then dropped.

Whether a month may go is approvals.audit.retention's answer (``month_refusals``).
``month_archive`` writes, per organisation, the month's events as gzip JSON Lines in the
audit export's row format (so ``python -m approvals.audit.offline_verify`` checks a
gunzipped archive as it checks an export) and then a manifest: counts, the first and
last hash, each workflow's chain head, the organisation's daily seals of the month's
days (approvals.audit.daily_seal), the data file's SHA-256, signed with the seal key
(HMAC-SHA256, as seals are). It reads everything back and checks it (the hashes
recompute and chain, the counts and heads equal the manifest's and the live rows', the
daily seals verify and equal the live ones), and only then detaches and drops the
partition. Every step can be repeated: a run killed at any point is finished by the next
run, which finds what is written, checks it, and carries on (``APPROVALS_ARCHIVE_KILL_AT``
names a step at which the process kills itself, for the test that proves it).

``verify_audit`` reads an archived month's chains from the archive (``ArchivedHistory``);
approvals.audit.restore brings a month back."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import hashlib
import hmac
import json
import os
import signal
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages
from django.db import connection, transaction
from django.db.models import Count, Max

from .. import clock
from ..models import Tenant, Workflow, WorkflowEvent, history_month
from ..runtime.partitions import EVENTS, month_add, partition_name
from . import archived_index, offline_verify
from .daily_proof import seal_fields
from .export import ExportFilter, _record, _rows, audit_events
from .models import ArchivedMonth, DailySeal, LegalHold
from .retention import (
    ArchiveError,
    ArchiveRefused,
    kept_until,
    month_bounds,
    month_refusals,
    month_words,
)
from .seal import key_id, seal_key

ALIAS = "archive"
MANIFEST_FORMAT = "approvals-history-archive-v1"
KILL_AT = "APPROVALS_ARCHIVE_KILL_AT"
# Steps at which ``KILL_AT`` may stop the archiver.
STEPS = ("data-written", "written", "verified", "detached", "dropped")
CHUNK = 2000
READ_ONLY = 0o444  # an archive file on the local disk

STORE_REFUSED = (
    "The archive store refused to keep {name} ({error}); the month stays in the database. "
    "An S3 bucket must have Object Lock enabled."
)
NOTHING = "{month} has no events in the database and no archive: there is nothing to do."
IN_DEFAULT = (
    "{month} has no partition of its own: its events are in the default partition. Create "
    "the month's partition and move them there first."
)


def _storage() -> Storage:
    return storages[ALIAS]


def archive_names(tenant_id: int, month: dt.date) -> tuple[str, str]:
    base = f"history/{month:%Y-%m}/tenant-{tenant_id}"
    return f"{base}/events.jsonl.gz", f"{base}/manifest.json"


# -- the archive's files -----------------------------------------------------------------


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def manifest_signature(manifest: dict[str, Any], *, key: bytes) -> str:
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return hmac.new(key, MANIFEST_FORMAT.encode() + b"\n" + _canonical(body), "sha256").hexdigest()


def _save(storage: Storage, name: str, content: IO[bytes], *, retain_until: dt.datetime) -> None:
    """Write one archive object, locked as far as the store allows: on an S3-compatible
    store under Object Lock until ``retain_until`` (``APPROVALS_ARCHIVE_OBJECT_LOCK_MODE``;
    a bucket without Object Lock refuses the write, so the month stays live), on the
    local disk read-only (0444), which stops a slip, not the files' owner or root."""
    if storage.exists(name):
        storage.delete(name)  # on a versioned bucket: a delete marker; the locked version stays
    try:
        saved = _locking(storage, retain_until).save(name, File(content, name=name))
    except Exception as exc:  # the store's own error: botocore's ClientError, an OSError
        raise ArchiveError(STORE_REFUSED.format(name=name, error=exc)) from exc
    if saved != name:
        raise ArchiveError(f"The archive store kept {name} as {saved}; it must keep the name.")
    if isinstance(storage, FileSystemStorage):
        os.chmod(storage.path(name), READ_ONLY)


def _locking(storage: Storage, retain_until: dt.datetime) -> Storage:
    """``storage``, or for an S3 store the same store writing under Object Lock."""
    # boto3 is imported only when archiving
    from storages.backends.s3 import S3Storage  # type: ignore[import-untyped]

    if not isinstance(storage, S3Storage):
        return storage
    options = dict(settings.STORAGES[ALIAS].get("OPTIONS", {}))
    options["object_parameters"] = {
        **options.get("object_parameters", {}),
        "ObjectLockMode": settings.APPROVALS_ARCHIVE_OBJECT_LOCK_MODE,
        "ObjectLockRetainUntilDate": whole_seconds_up(retain_until),
    }
    return type(storage)(**options)


def whole_seconds_up(at: dt.datetime) -> dt.datetime:
    """``at`` rounded up to the second (a store keeps a lock's date in whole seconds:
    rounding down would end the lock before the retention)."""
    return at if not at.microsecond else at.replace(microsecond=0) + dt.timedelta(seconds=1)


def _last_event_at(tenant_id: int, month: dt.date) -> dt.datetime | None:
    """The organisation's last event of ``month``: its last workflow's finish."""
    events = WorkflowEvent.objects.filter(tenant_id=tenant_id, history_month=month)
    last: dt.datetime | None = events.aggregate(last=Max("created_at"))["last"]
    return last


def _live_heads(tenant_id: int, month: dt.date) -> dict[str, list[Any]]:
    start, end = month_bounds(month)
    rows = Workflow.objects.filter(
        tenant_id=tenant_id, created_at__gte=start, created_at__lt=end, version__gt=0
    ).values_list("pk", "version", "last_hash")
    return {str(pk): [version, last_hash] for pk, version, last_hash in rows}


def _write(tenant: Tenant, month: dt.date, *, retain_until: dt.datetime) -> dict[str, Any]:
    """Write one organisation's events of ``month`` and then their manifest (the
    manifest last: an archive without one is unfinished and is written again), each
    locked until ``retain_until``."""
    storage = _storage()
    data_name, manifest_name = archive_names(tenant.pk, month)
    qs = _rows(
        audit_events(tenant_id=tenant.pk, filters=ExportFilter()).filter(history_month=month)
    )
    heads: dict[str, list[Any]] = {}
    count = 0
    first = last = ""
    with tempfile.TemporaryFile() as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            for values in qs.iterator(chunk_size=CHUNK):
                row = _record(values, True, with_id=True)
                out.write(_canonical_line(row))
                count += 1
                first = first or row["hash"]
                last = row["hash"]
                heads[row["workflow_id"]] = [row["seq"], row["hash"]]
        size = raw.tell()
        raw.seek(0)
        digest = _sha256(raw)
        raw.seek(0)
        _save(storage, data_name, raw, retain_until=retain_until)
    _step("data-written")
    key = seal_key()
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "tenant_id": tenant.pk,
        "tenant_slug": tenant.slug,
        "month": f"{month:%Y-%m}",
        "partition": partition_name(month),
        "events": count,
        "workflows": len(heads),
        "first_hash": first,
        "last_hash": last,
        "heads": heads,
        "daily_seals": _daily_seals(tenant.pk, month),
        "data": data_name,
        "data_sha256": digest,
        "data_bytes": size,
        "written_at": clock.now().isoformat(),
        "key_id": key_id(key),
    }
    manifest["signature"] = manifest_signature(manifest, key=key)
    with tempfile.TemporaryFile() as f:
        f.write(json.dumps(manifest, indent=1, sort_keys=True).encode())
        f.seek(0)
        _save(storage, manifest_name, f, retain_until=retain_until)
    return manifest


def _daily_seals(tenant_id: int, month: dt.date) -> list[dict[str, Any]]:
    """The organisation's daily seals of the days of ``month``, by day."""
    seals = DailySeal.objects.filter(
        tenant_id=tenant_id, day__gte=month, day__lt=month_add(month, 1)
    ).select_related("tenant")
    return [seal_fields(seal) for seal in seals.order_by("day")]


def _daily_problems(manifest: dict[str, Any], key: bytes, where: str) -> list[str]:
    """The archived daily seals' problems: each one's signature, the days chained
    within the month, and each the same as the live row of its day, when there is one."""
    archived = manifest.get("daily_seals") or []
    if not isinstance(archived, list):
        return [f"{where}: its daily seals cannot be read"]
    problems = []
    for seal in archived:
        if seal.get("key_id") != key_id(key) or not hmac.compare_digest(
            offline_verify.daily_signature(seal, key), str(seal.get("signature"))
        ):
            day = offline_verify.day_words(seal.get("day"))
            problems.append(f"{where}: its daily seal of {day} does not verify")
    for seal, after in zip(archived, archived[1:], strict=False):
        if after.get("prev_signature") != seal.get("signature"):
            problems.append(
                f"{where}: its daily seal of {offline_verify.day_words(after.get('day'))} does "
                f"not carry the signature of the seal of "
                f"{offline_verify.day_words(seal.get('day'))} (a day is gone or rewritten)"
            )
    month = dt.date.fromisoformat(f"{manifest['month']}-01")
    live = {s["day"]: s["signature"] for s in _daily_seals(int(manifest["tenant_id"]), month)}
    for seal in archived:
        if seal.get("day") in live and live[seal["day"]] != seal.get("signature"):
            day = offline_verify.day_words(seal.get("day"))
            problems.append(f"{where}: its daily seal of {day} is not the database's")
    return problems


def _canonical_line(row: dict[str, Any]) -> bytes:
    return (json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


def _sha256(f: IO[bytes]) -> str:
    h = hashlib.sha256()
    while block := f.read(1 << 20):
        h.update(block)
    return h.hexdigest()


@dataclass
class ArchiveCheck:
    """What reading one archive back found."""

    tenant_id: int
    month: dt.date
    manifest: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # workflow id -> its events as verify_audit reads them (with ``rows=True``)
    events: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    ids: dict[tuple[str, int], int] = field(default_factory=dict)  # (workflow, seq) -> id

    @property
    def ok(self) -> bool:
        return not self.problems


def archive_check(tenant_id: int, month: dt.date, *, rows: bool = False) -> ArchiveCheck:
    """Read one organisation's archive of ``month`` back and check it: the manifest's
    signature, the data's SHA-256, every hash recomputed and chained (offline_verify's
    rules), and the counts, first and last hash and heads against the manifest."""
    check = ArchiveCheck(tenant_id, month)
    where = f"the archive of {month_words(month)} (organisation {tenant_id})"
    storage = _storage()
    data_name, manifest_name = archive_names(tenant_id, month)
    if not storage.exists(manifest_name):
        check.problems.append(f"{where} has no manifest (it was not finished)")
        return check
    try:
        with storage.open(manifest_name, "rb") as f:
            manifest = json.loads(f.read())
        assert isinstance(manifest, dict)
    except (ValueError, AssertionError):
        check.problems.append(f"{where}: its manifest cannot be read")
        return check
    check.manifest = manifest
    key = seal_key()
    if manifest.get("key_id") != key_id(key):
        check.problems.append(f"{where}: its manifest is signed with another key")
    elif not hmac.compare_digest(
        manifest_signature(manifest, key=key), str(manifest.get("signature"))
    ):
        check.problems.append(f"{where}: its manifest's signature does not verify")
    if manifest.get("tenant_id") != tenant_id or manifest.get("month") != f"{month:%Y-%m}":
        check.problems.append(f"{where}: its manifest is another organisation's or month's")
    else:
        check.problems.extend(_daily_problems(manifest, key, where))
    if not storage.exists(data_name):
        check.problems.append(f"{where}: its events file is gone")
        return check
    with tempfile.TemporaryFile() as packed, tempfile.NamedTemporaryFile() as plain:
        with storage.open(data_name, "rb") as f:
            while block := f.read(1 << 20):
                packed.write(block)
        packed.seek(0)
        if _sha256(packed) != manifest.get("data_sha256"):
            check.problems.append(f"{where}: its events file is not the one the manifest signs")
            return check
        packed.seek(0)
        try:
            with gzip.GzipFile(fileobj=packed, mode="rb") as unpacked:
                while block := unpacked.read(1 << 20):
                    plain.write(block)
        except (OSError, EOFError):
            check.problems.append(f"{where}: its events file cannot be unpacked")
            return check
        plain.flush()
        report = offline_verify.verify_export(plain.name, jobs=1, extra_columns=("event_id",))
        check.problems.extend(f"{where}: {p}" for p in report.problems)
        plain.seek(0)
        _recount(check, plain, where, rows=rows)
    return check


def _recount(check: ArchiveCheck, plain: IO[bytes], where: str, *, rows: bool) -> None:
    manifest = check.manifest
    heads: dict[str, list[Any]] = {}
    count = 0
    first = last = ""
    for line in plain:
        if not line.strip():
            continue
        row = json.loads(line)
        count += 1
        first = first or row["hash"]
        last = row["hash"]
        heads[row["workflow_id"]] = [row["seq"], row["hash"]]
        if rows:
            check.events.setdefault(row["workflow_id"], []).append(_event_tuple(row))
            check.ids[(row["workflow_id"], row["seq"])] = int(row["event_id"])
    if count != manifest.get("events") or len(heads) != manifest.get("workflows"):
        check.problems.append(
            f"{where}: holds {count} event(s) of {len(heads)} workflow(s), its manifest says "
            f"{manifest.get('events')} of {manifest.get('workflows')}"
        )
    if (first, last) != (manifest.get("first_hash"), manifest.get("last_hash")):
        check.problems.append(f"{where}: its first or last hash is not the manifest's")
    if heads != manifest.get("heads"):
        check.problems.append(f"{where}: its chain heads are not the manifest's")


def _event_tuple(row: dict[str, Any]) -> tuple[Any, ...]:
    """An archived row as ``verify._EVENT_FIELDS`` orders an event's columns."""
    return (
        row["workflow_id"],
        row["seq"],
        row["type"],
        row["payload"],
        row["request_id"],
        row["actor_id"],
        row["role"],
        row["on_behalf_of_id"],
        dt.datetime.fromisoformat(row["created_at"]),
        row["prev_hash"],
        row["tenant_id"],
        row["schema_version"],
        row["result"],
        row["hash_format"],
        row.get("recorded"),
        row["hash"],
    )


def _against_live(check: ArchiveCheck) -> list[str]:
    """What differs between a checked archive and the live events it copies."""
    month, tenant_id = check.month, check.tenant_id
    where = f"the archive of {month_words(month)} (organisation {tenant_id})"
    live = WorkflowEvent.objects.filter(tenant_id=tenant_id, history_month=month).count()
    problems = []
    if check.manifest.get("events") != live:
        problems.append(
            f"{where} holds {check.manifest.get('events')} event(s); the database {live}"
        )
    if check.manifest.get("heads") != _live_heads(tenant_id, month):
        problems.append(f"{where}: its chain heads are not the workflows' recorded heads")
    if (check.manifest.get("daily_seals") or []) != _daily_seals(tenant_id, month):
        problems.append(f"{where}: its daily seals are not the database's")
    return problems


# -- the archiver ------------------------------------------------------------------------


@dataclass
class ArchiveResult:
    month: dt.date
    tenants: dict[int, int] = field(default_factory=dict)  # tenant id -> events
    written: list[int] = field(default_factory=list)  # tenants written this run
    dropped: bool = False
    dry_run: bool = False

    @property
    def events(self) -> int:
        return sum(self.tenants.values())


def _step(name: str) -> None:
    """Where a test's ``APPROVALS_ARCHIVE_KILL_AT`` kills the archiver."""
    if os.environ.get(KILL_AT) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def partition_state(name: str) -> tuple[bool, bool]:
    """(the table exists, it is attached to the events table)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.oid, EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhrelid = c.oid "
            "AND i.inhparent = %s::regclass) FROM pg_class c "
            "WHERE c.relname = %s AND c.relkind IN ('r', 'p')",
            [EVENTS, name],
        )
        row = cursor.fetchone()
    return (row is not None, bool(row and row[1]))


def _attach(name: str, month: dt.date) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f'ALTER TABLE {EVENTS} ATTACH PARTITION "{name}" FOR VALUES FROM (%s) TO (%s)',
            [month, month_add(month, 1)],
        )


BUSY = "Another run is archiving or restoring {month}; try again once it has finished."


@contextlib.contextmanager
def month_lock(month: dt.date) -> Iterator[None]:
    """One archiver or restorer per month at a time (a session advisory lock, let go
    when the run ends or its connection drops, as when it is killed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [f"archive:{month}"])
        if not cursor.fetchone()[0]:
            raise ArchiveError(BUSY.format(month=month_words(month)))
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [f"archive:{month}"])


def month_archive(month: dt.date, *, dry_run: bool = False) -> ArchiveResult:
    """Archive ``month`` (see the module's text); raises ArchiveRefused, in words, when
    it may not go yet. Safe to run again after a run that stopped at any point."""
    with month_lock(month):
        return _month_archive(month, dry_run=dry_run)


def _month_archive(month: dt.date, *, dry_run: bool) -> ArchiveResult:
    result = ArchiveResult(month, dry_run=dry_run)
    started = clock.now()
    name = partition_name(month)
    exists, attached = partition_state(name)
    recorded = list(ArchivedMonth.objects.filter(month=month).order_by("tenant_id"))
    if not exists:
        if WorkflowEvent.objects.filter(history_month=month).exists():
            raise ArchiveError(IN_DEFAULT.format(month=month_words(month)))
        if not recorded:
            raise ArchiveError(NOTHING.format(month=month_words(month)))
        # dropped by an earlier run: check the archives and record it
        problems = [p for r in recorded for p in archive_check(r.tenant_id, month).problems]
        if problems:
            raise ArchiveError("\n".join(problems))
        result.tenants = {r.tenant_id: r.events for r in recorded}
        if not dry_run:
            ArchivedMonth.objects.filter(month=month, dropped_at=None).update(
                dropped_at=clock.now()
            )
        result.dropped = True
        return result
    if exists and not attached and not dry_run:
        _attach(name, month)  # detached by an earlier run that stopped before dropping
    refusals = month_refusals(month)
    if refusals:
        raise ArchiveRefused(month, refusals)
    counts = (
        WorkflowEvent.objects.filter(history_month=month)
        .order_by()
        .values("tenant_id")
        .annotate(n=Count("id"))
        .values_list("tenant_id", "n")
    )
    result.tenants = dict(sorted(counts))
    if dry_run:
        return result
    checks: list[ArchiveCheck] = []
    for tenant in Tenant.objects.filter(pk__in=result.tenants).order_by("pk"):
        last_finished = _last_event_at(tenant.pk, month) or clock.now()
        check = archive_check(tenant.pk, month)
        if not check.ok or _against_live(check):  # unwritten, unfinished or stale
            retain_until = kept_until(tenant.pk, last_finished)
            manifest = _write(tenant, month, retain_until=retain_until)
            result.written.append(tenant.pk)
            check = archive_check(tenant.pk, month)
        else:
            manifest = check.manifest
        checks.append(check)
        data_name, manifest_name = archive_names(tenant.pk, month)
        ArchivedMonth.objects.update_or_create(
            tenant=tenant,
            month=month,
            defaults={
                "data_name": data_name,
                "manifest_name": manifest_name,
                "events": manifest["events"],
                "workflows": manifest["workflows"],
                "signature": manifest["signature"],
                "written_at": dt.datetime.fromisoformat(manifest["written_at"]),
                "dropped_at": None,
                "last_finished_at": last_finished,
            },
        )
        archived_index.month_index(tenant=tenant, month=month, manifest=manifest)
    _step("written")
    problems = [p for c in checks for p in (*c.problems, *_against_live(c))]
    if problems:
        raise ArchiveError(
            "The archive did not read back as written; the month stays in the database:\n"
            + "\n".join(problems)
        )
    _step("verified")
    with transaction.atomic(), connection.cursor() as cursor:
        # a hold put on while the archive was written still keeps the month; one put on
        # now waits for the detach (SHARE blocks inserts until commit)
        cursor.execute(f"LOCK TABLE {LegalHold._meta.db_table} IN SHARE MODE")
        held = LegalHold.objects.filter(tenant_id__in=result.tenants, at__gte=started)
        if held.exists() and (refusals := month_refusals(month)):
            raise ArchiveRefused(month, refusals)
        # checks deferred to commit would hold the table (none outside a transaction)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f'ALTER TABLE {EVENTS} DETACH PARTITION "{name}"')
    _step("detached")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f'DROP TABLE "{name}"')
        ArchivedMonth.objects.filter(month=month).update(dropped_at=clock.now())
    _step("dropped")
    result.dropped = True
    return result


# -- verify_audit's view of archived months ----------------------------------------------


class ArchivedHistory:
    """The workflows whose month is archived (its partition dropped): ``verify_audit``
    sets them aside as it walks the workflows, then checks each organisation-month's
    archive once and their chains from it."""

    def __init__(self, tenant: Tenant | None) -> None:
        months = ArchivedMonth.objects.exclude(dropped_at=None)
        if tenant is not None:
            months = months.filter(tenant=tenant)
        self.months = {(m.tenant_id, m.month) for m in months}
        self.waiting: dict[tuple[int, dt.date], list[Workflow]] = defaultdict(list)

    def holds(self, wf: Workflow) -> bool:
        if not self.months:
            return False
        key = (wf.tenant_id, history_month(wf.created_at))
        if key not in self.months:
            return False
        self.waiting[key].append(wf)
        return True

    def checked(self) -> Iterator[tuple[Workflow | None, list[str], list[tuple[Any, ...]]]]:
        """(None, the archive's problems, []) once per archive, then (workflow, [], its
        archived events) for each workflow set aside."""
        for (tenant_id, month), workflows in sorted(self.waiting.items()):
            check = archive_check(tenant_id, month, rows=True)
            yield None, check.problems, []
            for wf in workflows:
                yield wf, [], check.events.pop(str(wf.pk), [])
