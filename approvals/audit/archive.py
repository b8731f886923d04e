"""Retention and archive: a month of history moved out of the database, kept sealed in
the archive store, and brought back for an investigation.

A workflow's history is kept for its organisation's retention (``RetentionPolicy``,
else ``APPROVALS_RETENTION_YEARS``: seven years) after it finishes, and for as long as
a legal hold is on it or on its organisation (``LegalHold``, set by an auditor or an
organisation admin with a reason, append-only and signed with the seal key). A month's
partition (every event carries the month its workflow started, migration 0029) may be
archived when every workflow of it has finished, is past its retention, and is held by
none; otherwise ``month_refusals`` says, in words, which workflows keep it.

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

``month_restore`` checks the archive and puts the month's events back in a partition of
their own; ``verify_audit`` reads an archived month's chains from the archive."""

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
import uuid
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import connection, transaction
from django.db.models import Count, Max, Q

from .. import access, clock
from ..models import Tenant, User, Workflow, WorkflowEvent, history_month
from ..runtime import tenant_scope
from ..runtime.partitions import (
    EVENTS,
    month_add,
    partition_name,
    tenant_statistics_sql,
    unreachable_sql,
)
from . import archived_index, offline_verify
from .daily_proof import seal_fields
from .export import ExportFilter, _record, _rows, audit_events
from .models import ArchivedMonth, DailySeal, LegalHold, RetentionPolicy
from .seal import key_id, seal_key

ALIAS = "archive"
MANIFEST_FORMAT = "approvals-history-archive-v1"
HOLD_FORMAT = "approvals-legal-hold-v1"
KILL_AT = "APPROVALS_ARCHIVE_KILL_AT"
# Steps at which ``KILL_AT`` may stop the archiver.
STEPS = ("data-written", "written", "verified", "detached", "dropped")
_CHUNK = 2000
REFUSALS_KEPT = 100  # refusals month_refusals keeps before counting the rest

BAD_MONTH = "The month must be written YYYY-MM, such as 2019-03 ({text!r} is not)."
NOT_PAST = "{month} has not ended yet: only a past month can be archived."
NOTHING = "{month} has no events in the database and no archive: there is nothing to do."
IN_DEFAULT = (
    "{month} has no partition of its own: its events are in the default partition. Create "
    "the month's partition and move them there first."
)
NOT_ARCHIVED = "{month} is not archived: its events are in the database."
NO_ARCHIVE = "{month} has no archive to restore."
HOLD_WHO = "Only an auditor or an organisation admin may put or take off a legal hold."
HOLD_REASON = "Say why: a legal hold needs a reason."
HOLD_OTHER = "That workflow is not one of your organisation's."
RUNNING = "{wf} is still running"
KEPT = (
    "{wf} finished on {finished:%d %B %Y} and is kept until {until:%d %B %Y} "
    "({years} after it finished)"
)
HELD = "{wf} is on legal hold since {at:%d %B %Y}, put by {by}: {reason}"
TENANT_HELD = "{tenant} is on legal hold since {at:%d %B %Y}, put by {by}: {reason}"


class ArchiveError(Exception):
    """A request the archive refuses, said in words; nothing was changed."""


class ArchiveRefused(ArchiveError):
    def __init__(self, month: dt.date, reasons: list[str]) -> None:
        self.reasons = reasons
        lines = "".join(f"\n- {r}" for r in reasons)
        super().__init__(f"{_words(month)} cannot be archived yet:{lines}")


def _words(month: dt.date) -> str:
    return f"{month:%B %Y}"


def month_parse(text: str) -> dt.date:
    try:
        return dt.datetime.strptime(text.strip(), "%Y-%m").date()
    except ValueError:
        raise ArchiveError(BAD_MONTH.format(text=text)) from None


def _storage() -> Storage:
    return storages[ALIAS]


def archive_names(tenant_id: int, month: dt.date) -> tuple[str, str]:
    base = f"history/{month:%Y-%m}/tenant-{tenant_id}"
    return f"{base}/events.jsonl.gz", f"{base}/manifest.json"


# -- retention and legal holds -----------------------------------------------------------


def retention_years(tenant_id: int) -> int:
    policy = RetentionPolicy.objects.filter(tenant_id=tenant_id).first()
    return policy.years if policy is not None else int(settings.APPROVALS_RETENTION_YEARS)


@tenant_scope.atomic_for_tenant_of("tenant")
def retention_set(*, tenant: Tenant, years: int, by: str) -> RetentionPolicy:
    if not 1 <= years <= 100:
        raise ArchiveError("Retention is a whole number of years from 1 to 100.")
    policy, _ = RetentionPolicy.objects.update_or_create(
        tenant=tenant, defaults={"years": years, "set_by": by, "set_at": clock.now()}
    )
    return policy


def _years_after(at: dt.datetime, years: int) -> dt.datetime:
    try:
        return at.replace(year=at.year + years)
    except ValueError:  # 29 February
        return at.replace(year=at.year + years, day=28)


def hold_signature(*, key: bytes, hold: LegalHold) -> str:
    message = "\n".join(
        (
            HOLD_FORMAT,
            str(hold.tenant_id),
            str(hold.workflow_id or "*"),
            hold.action,
            hold.by,
            hold.at.isoformat(),
            hold.reason,
        )
    ).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def hold_verifies(hold: LegalHold, *, key: bytes) -> bool:
    expected = hold_signature(key=key, hold=hold)
    return hold.key_id == key_id(key) and hmac.compare_digest(expected, hold.signature)


@tenant_scope.atomic_for_tenant_of("by")
def hold_set(
    *,
    by: User,
    reason: str,
    workflow_id: uuid.UUID | str | None = None,
    release: bool = False,
) -> LegalHold:
    """Put (or, with ``release``, take off) a legal hold on one workflow of ``by``'s
    organisation, or on the whole organisation when no workflow is named."""
    if by.tenant_id is None or not (
        access.has_role(by, access.Role.AUDITOR) or access.has_role(by, access.Role.ORG_ADMIN)
    ):
        raise ArchiveError(HOLD_WHO)
    if not reason.strip():
        raise ArchiveError(HOLD_REASON)
    if workflow_id is not None:
        try:
            workflow_id = uuid.UUID(str(workflow_id))
        except ValueError:
            raise ArchiveError(HOLD_OTHER) from None
        if not Workflow.objects.filter(pk=workflow_id, tenant_id=by.tenant_id).exists():
            raise ArchiveError(HOLD_OTHER)
    key = seal_key()
    hold = LegalHold(
        tenant_id=by.tenant_id,
        workflow_id=workflow_id,
        action=LegalHold.RELEASE if release else LegalHold.HOLD,
        by=by.username,
        at=clock.now(),
        reason=reason.strip(),
        key_id=key_id(key),
    )
    hold.signature = hold_signature(key=key, hold=hold)
    hold.save()
    return hold


def holds_in_force(tenant_ids: set[int]) -> dict[tuple[int, str | None], LegalHold]:
    """(tenant, workflow id or None for the organisation) -> the hold in force. A
    release whose signature does not verify (written without the key) releases
    nothing; a hold is a hold however it was written."""
    key = seal_key()
    latest: dict[tuple[int, str | None], LegalHold] = {}
    for hold in LegalHold.objects.filter(tenant_id__in=tenant_ids).order_by("at", "id"):
        if hold.action != LegalHold.HOLD and not hold_verifies(hold, key=key):
            continue
        target = (hold.tenant_id, str(hold.workflow_id) if hold.workflow_id else None)
        latest[target] = hold
    return {k: v for k, v in latest.items() if v.action == LegalHold.HOLD}


# -- whether a month may go --------------------------------------------------------------


def _month_bounds(month: dt.date) -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime(month.year, month.month, 1, tzinfo=dt.UTC)
    end_month = month_add(month, 1)
    return start, dt.datetime(end_month.year, end_month.month, 1, tzinfo=dt.UTC)


def _workflow_words(wf: Mapping[str, Any]) -> str:
    return f"{wf['subject_type']} {wf['subject_id']} (workflow {wf['id']})"


def month_refusals(month: dt.date) -> list[str]:
    """Why ``month`` cannot be archived now, one reason a line (the first
    ``REFUSALS_KEPT``, then how many more); empty when it can. The month's workflows
    are read as a stream, each with its last event's time, so memory holds the reasons
    kept, not the month."""
    start, end = _month_bounds(month)
    now = clock.now()
    if end > now:
        return [NOT_PAST.format(month=_words(month))]
    in_month = Workflow.objects.filter(created_at__gte=start, created_at__lt=end)
    tenants = set(in_month.order_by().values_list("tenant_id", flat=True).distinct())
    holds = holds_in_force(tenants)
    years = {t: retention_years(t) for t in tenants}
    reasons: list[str] = []
    more = 0

    def add(reason: str) -> None:
        nonlocal more
        if len(reasons) < REFUSALS_KEPT:
            reasons.append(reason)
        else:
            more += 1

    for tenant in Tenant.objects.filter(pk__in=tenants).order_by("pk"):
        hold = holds.get((tenant.pk, None))
        if hold is not None:
            add(TENANT_HELD.format(tenant=tenant.name, at=hold.at, by=hold.by, reason=hold.reason))
    rows = (
        in_month.order_by("created_at", "pk")
        .annotate(last=Max("events__created_at", filter=Q(events__history_month=month)))
        .values("id", "tenant_id", "status", "subject_type", "subject_id", "last")
    )
    for wf in rows.iterator(chunk_size=_CHUNK):
        words = _workflow_words(wf)
        if wf["status"] not in _TERMINAL:
            add(RUNNING.format(wf=words))
            continue
        hold = holds.get((wf["tenant_id"], str(wf["id"])))
        if hold is not None:
            add(HELD.format(wf=words, at=hold.at, by=hold.by, reason=hold.reason))
        last, kept = wf["last"], years[wf["tenant_id"]]
        if last is not None and (until := _years_after(last, kept)) > now:
            add(KEPT.format(wf=words, finished=last, until=until, years=_years(kept)))
    if more:
        reasons.append(f"and {more} more")
    return reasons


def _years(n: int) -> str:
    return f"{n} year" if n == 1 else f"{n} years"


def _terminal() -> frozenset[str]:
    from templates_engine.state import TERMINAL

    return frozenset(str(s) for s in TERMINAL)


_TERMINAL = _terminal()


# -- the archive's files -----------------------------------------------------------------


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def manifest_signature(manifest: dict[str, Any], *, key: bytes) -> str:
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return hmac.new(key, MANIFEST_FORMAT.encode() + b"\n" + _canonical(body), "sha256").hexdigest()


def _save(storage: Storage, name: str, content: IO[bytes]) -> None:
    if storage.exists(name):
        storage.delete(name)
    saved = storage.save(name, File(content, name=name))
    if saved != name:
        raise ArchiveError(f"The archive store kept {name} as {saved}; it must keep the name.")


def _live_heads(tenant_id: int, month: dt.date) -> dict[str, list[Any]]:
    start, end = _month_bounds(month)
    rows = Workflow.objects.filter(
        tenant_id=tenant_id, created_at__gte=start, created_at__lt=end, version__gt=0
    ).values_list("pk", "version", "last_hash")
    return {str(pk): [version, last_hash] for pk, version, last_hash in rows}


def _write(tenant: Tenant, month: dt.date) -> dict[str, Any]:
    """Write one organisation's events of ``month`` and then their manifest (the
    manifest last: an archive without one is unfinished and is written again)."""
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
            for values in qs.iterator(chunk_size=_CHUNK):
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
        _save(storage, data_name, raw)
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
        _save(storage, manifest_name, f)
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
    where = f"the archive of {_words(month)} (organisation {tenant_id})"
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
    where = f"the archive of {_words(month)} (organisation {tenant_id})"
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


def _partition_state(name: str) -> tuple[bool, bool]:
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
def _month_lock(month: dt.date) -> Iterator[None]:
    """One archiver or restorer per month at a time (a session advisory lock, let go
    when the run ends or its connection drops, as when it is killed)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [f"archive:{month}"])
        if not cursor.fetchone()[0]:
            raise ArchiveError(BUSY.format(month=_words(month)))
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [f"archive:{month}"])


def month_archive(month: dt.date, *, dry_run: bool = False) -> ArchiveResult:
    """Archive ``month`` (see the module's text); raises ArchiveRefused, in words, when
    it may not go yet. Safe to run again after a run that stopped at any point."""
    with _month_lock(month):
        return _month_archive(month, dry_run=dry_run)


def _month_archive(month: dt.date, *, dry_run: bool) -> ArchiveResult:
    result = ArchiveResult(month, dry_run=dry_run)
    started = clock.now()
    name = partition_name(month)
    exists, attached = _partition_state(name)
    recorded = list(ArchivedMonth.objects.filter(month=month).order_by("tenant_id"))
    if not exists:
        if WorkflowEvent.objects.filter(history_month=month).exists():
            raise ArchiveError(IN_DEFAULT.format(month=_words(month)))
        if not recorded:
            raise ArchiveError(NOTHING.format(month=_words(month)))
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
        check = archive_check(tenant.pk, month)
        if not check.ok or _against_live(check):  # unwritten, unfinished or stale
            manifest = _write(tenant, month)
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


# -- bringing a month back ---------------------------------------------------------------

_INSERT_COLUMNS = (
    "id",
    "tenant_id",
    "workflow_id",
    "seq",
    "type",
    "schema_version",
    "payload",
    "request_id",
    "result",
    "actor_id",
    "role",
    "on_behalf_of_id",
    "created_at",
    "prev_hash",
    "hash",
    "hash_format",
    "recorded",
    "history_month",
)


def month_restore(month: dt.date) -> dict[int, int]:
    """Check ``month``'s archives and put their events back in the month's partition,
    in one transaction; returns tenant id -> events restored."""
    with _month_lock(month):
        return _month_restore(month)


def _month_restore(month: dt.date) -> dict[int, int]:
    recorded = list(ArchivedMonth.objects.filter(month=month).order_by("tenant_id"))
    if not recorded:
        raise ArchiveError(NO_ARCHIVE.format(month=_words(month)))
    if any(r.dropped_at is None for r in recorded):
        raise ArchiveError(NOT_ARCHIVED.format(month=_words(month)))
    checks = [archive_check(r.tenant_id, month, rows=True) for r in recorded]
    problems = [p for c in checks for p in c.problems]
    if problems:
        raise ArchiveError(
            "The archive does not check out; nothing was restored:\n" + "\n".join(problems)
        )
    name = partition_name(month)
    placeholders = ",".join(["%s"] * len(_INSERT_COLUMNS))
    sql = f'INSERT INTO "{name}" ({",".join(_INSERT_COLUMNS)}) VALUES ({placeholders})'
    restored: dict[int, int] = {}
    with transaction.atomic():
        exists, attached = _partition_state(name)
        with connection.cursor() as cursor:
            if exists and not attached:
                cursor.execute(f'DROP TABLE "{name}"')  # left empty by a run that stopped
            cursor.execute(
                f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF {EVENTS} '
                f"FOR VALUES FROM (%s) TO (%s)",
                [month, month_add(month, 1)],
            )
            cursor.execute(unreachable_sql(name))  # as a partition made ahead is
            cursor.execute(tenant_statistics_sql(name))
            cursor.execute(f'SELECT count(*) FROM "{name}"')
            if cursor.fetchone()[0]:
                raise ArchiveError(
                    f"{_words(month)} already has events in the database: not restored again."
                )
            for check in checks:
                rows = list(_restore_rows(check, month))
                for start in range(0, len(rows), _CHUNK):
                    cursor.executemany(sql, rows[start : start + _CHUNK])
                restored[check.tenant_id] = len(rows)
        ArchivedMonth.objects.filter(month=month).update(dropped_at=None)
    return restored


def _restore_rows(check: ArchiveCheck, month: dt.date) -> Iterator[tuple[Any, ...]]:
    """The archived events as ``_INSERT_COLUMNS`` rows, by event id."""
    rows = []
    for events in check.events.values():
        for e in events:
            wid, seq, type_, payload, request_id, actor_id, role, obo, created, prev = e[:10]
            tenant_id, schema_version, result, hash_format, recorded, hash_ = e[10:]
            rows.append(
                (
                    check.ids[(wid, seq)],
                    tenant_id,
                    wid,
                    seq,
                    type_,
                    schema_version,
                    json.dumps(payload),
                    request_id,
                    None if result is None else json.dumps(result),
                    actor_id,
                    role,
                    obo,
                    created,
                    prev,
                    hash_,
                    hash_format,
                    None if recorded is None else json.dumps(recorded),
                    month,
                )
            )
    rows.sort(key=lambda r: r[0])
    yield from rows


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
