"""Proof that nothing was altered: every hash chain recomputed, each compared with its
workflow's recorded ``version`` and ``last_hash`` (so a deleted tail is found), and
checked against the signed seals of chain heads (so a chain recomputed after an edit
is found too), each organisation's seals checked as a chain of their own (so a seal
deleted or rewritten is found), and every event older than two seal intervals must be
under a seal (so seals deleted at the end of the chain, or all of them, are found).
Each problem is a ``Break`` naming the workflow, the seq and what."""

from __future__ import annotations

import datetime as dt
import re
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from .. import clock
from ..models import Tenant, User, Workflow, WorkflowEvent, history_month
from ..runtime.chain import HASH_V1, HASH_V3, EventRow, sent_spellings, stored_event_hash
from .archive import ArchivedHistory
from .archived_index import DeletedHistory
from .daily_seal import daily_check
from .models import AuditOverride, ChainSeal
from .override import override_verifies
from .seal import SealKeyMissing, heads_digest, seal_key, seal_problem

# Workflows whose events are fetched per query: bounds memory on a year of history.
WORKFLOW_BATCH = 500
_EVENT_FIELDS = (
    *EventRow._fields,
    "tenant_id",
    "schema_version",
    "result",
    "hash_format",
    "recorded",
    "hash",
)
# How many seal intervals an event may wait for its seal before its absence is a break:
# the job runs once an interval, and a run may be late by up to one more.
UNSEALED_INTERVALS = 2

SEALS_MISSING = "seals numbered {first} to {last} of {tenant} are gone (the next is number {next})"
SEAL_REPEATED = "{seal}: a second seal numbered {number} of {tenant}"
SEAL_UNLINKED = "{seal}: does not carry the signature of the seal numbered before it"
SEALS_DISAGREE = (
    "{seal}: the heads the seals of {tenant} list do not add up to the {count} workflow(s) it "
    "covers (a sealed workflow is gone, or a seal was lost)"
)
UNSEALED = (
    "written at {at:%Y-%m-%d %H:%M} UTC, more than {minutes} minutes ago, and under no seal "
    "(seals were deleted, or sealing stopped)"
)
OTHER_TENANT = "belongs to another organisation than its workflow"
SEALED_ELSEWHERE = "sealed by {seal} as another organisation's workflow"
OLDER_FORMAT = "hashed in an older format than the event before it"
UNKNOWN_FORMAT = "hashed in a format this version does not know ({format})"
EDITED = "its content does not match its hash (edited)"
# An event hashed before numbers had one form (runtime/chain.py): the same values, its
# hash taken over them as sent. Still a break until an operator accepts it
# (``accept_number_forms``, a signed override); then a note in the verdict.
SENT_SPELLING = (
    "its content does not match its hash as stored, but does with its numbers spelled as "
    "they were sent ({words}): hashed before numbers had one form; "
    '"accept_number_forms --reason" accepts it, recorded as an audit override'
)
ACCEPTED = (
    "{n} event(s) verify only with their numbers spelled as they were sent, hashed before "
    "numbers had one form; accepted by audit override(s) {overrides}: {events}."
)
# A user row renamed after its events recorded its name (hash format 3), named at the
# user's latest event: an export shows the recorded name, the pages today's.
RENAMED = (
    "its actor, user #{user}, is now {now}, but its events recorded the username {recorded} "
    "(the user row was changed after them)"
)
# What ``accept_number_forms`` records as its override's action.
ACCEPT_ACTION = "accept_number_forms"


@dataclass(frozen=True)
class Break:
    workflow_id: str | None
    seq: int | None
    what: str
    # An event that verifies with its numbers as sent (SENT_SPELLING): what was
    # respelled, and the override that accepted it, if one did.
    respelled: str | None = None
    accepted_by: int | None = None

    def __str__(self) -> str:
        where = f"workflow {self.workflow_id}" if self.workflow_id else "seals"
        if self.seq is not None:
            where += f" seq {self.seq}"
        return f"{where}: {self.what}"


@dataclass(frozen=True)
class _Sealed:
    version: int
    last_hash: str
    seal: ChainSeal


@dataclass
class _Walk:
    """One organisation's chain of seals, as far as it has been read."""

    tenant: str
    next: int = 1
    prev_signature: str = ""
    last: ChainSeal | None = None
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)


def chain_verify(*, workflow: Workflow) -> int | None:
    """The seq of the first event of ``workflow`` whose hash or link does not match, or
    None when its chain is intact."""
    breaks = list(_chain_breaks(workflow, _events(workflow.pk), sealed=[], cutoff=None))
    seqs = [b.seq for b in breaks if b.seq is not None]
    return min(seqs) if seqs else (workflow.version if breaks else None)


def audit_verify(
    *,
    tenant: Tenant | None = None,
    template_key: str | None = None,
    workflow_id: uuid.UUID | str | None = None,
    notes: list[str] | None = None,
    all_days: bool = False,
) -> tuple[list[Break], int]:
    """Every break in the chains and seals of ``tenant`` (every organisation when None),
    and the number of workflows checked. ``template_key`` or ``workflow_id`` narrow the
    chains checked to that workflow template's workflows or that one workflow; every
    seal of the organisation is still checked, and a sealed workflow that is gone is
    reported only when no narrowing is asked (a gone workflow has no template left).

    The daily seals are checked too (approvals.audit.daily_seal): their signatures and
    chain of days always; the last day's root (every day's with ``all_days``)
    recomputed from the history when no narrowing is asked; and with ``workflow_id``,
    the workflow's inclusion in the last day sealed.
    ``notes``, when given, receives a sentence on what the daily seals showed."""
    breaks: list[Break] = []
    seals, workflows = _in_scope(tenant, template_key, workflow_id)
    narrowed = template_key is not None or workflow_id is not None
    sealed: dict[str, list[_Sealed]] = defaultdict(list)
    try:
        key: bytes | None = seal_key()
    except SealKeyMissing as exc:
        key = None
        if seals.exists():
            breaks.append(Break(None, None, str(exc)))
    accepted: dict[tuple[str, int], int] = {}
    if key is not None:
        accepted = _accepted_spellings(tenant, key)
        breaks.extend(_seal_breaks(seals, key, sealed))
        one = workflows.first() if workflow_id is not None else None
        daily = daily_check(
            tenant=tenant, workflow=one, recompute=not narrowed, all_days=all_days, key=key
        )
        breaks.extend(Break(None, None, problem) for problem in daily.problems)
        breaks.extend(Break(str(workflow_id), None, problem) for problem in daily.workflow)
        if notes is not None:
            notes.append(f"Daily seals: {daily.words}.")
    names: _Names = {}
    checked = _chains_checked(tenant, workflows, sealed, accepted, names, breaks, notes)
    breaks.extend(_renamed_users(names))
    if not narrowed:  # what is left was sealed and is gone (or is out of a narrowed scope)
        breaks.extend(
            Break(gone, None, f"sealed at version {head.version} by {head.seal}, gone")
            for gone, heads in sealed.items()
            for head in heads
        )
    if notes is not None:
        notes.extend(_accepted_note(breaks))
    return [b for b in breaks if b.accepted_by is None], checked


def _in_scope(
    tenant: Tenant | None, template_key: str | None, workflow_id: uuid.UUID | str | None
) -> tuple[QuerySet[ChainSeal], QuerySet[Workflow]]:
    """The seals of the organisation (every one's when None), and the workflows whose
    chains are checked."""
    seals = ChainSeal.objects.select_related("tenant")
    # In the order they started: a batch's workflows then share one or two months, so
    # its events query reads one or two partitions (in id order each batch of 500 probed
    # every month's partition, 25 index scans of 500 ids each, JIT-compiled: 1.2 s a
    # batch at 10M events against 0.04 s).
    workflows = Workflow.objects.order_by("created_at", "pk")
    if tenant is not None:
        seals = seals.filter(tenant=tenant)
        workflows = workflows.filter(tenant=tenant)
    if template_key is not None:
        workflows = workflows.filter(template_key=template_key)
    if workflow_id is not None:
        workflows = workflows.filter(pk=workflow_id)
    return seals, workflows


def _chains_checked(
    tenant: Tenant | None,
    workflows: QuerySet[Workflow],
    sealed: dict[str, list[_Sealed]],
    accepted: dict[tuple[str, int], int],
    names: _Names,
    breaks: list[Break],
    notes: list[str] | None,
) -> int:
    """Walk every chain of ``workflows`` in batches, and those of an archived month from
    the archive, adding their breaks to ``breaks``; the number of workflows checked.
    The heads found are taken out of ``sealed``; workflows retention deleted are
    checked against their tombstones, with a sentence on them in ``notes``."""
    interval = getattr(settings, "APPROVALS_AUDIT_SEAL_INTERVAL_SECONDS", 600)
    minutes = UNSEALED_INTERVALS * interval / 60
    cutoff = (clock.now() - dt.timedelta(minutes=minutes), round(minutes))
    checked = 0
    batch: list[Workflow] = []
    # Workflows of an archived month have no events left here: set aside, and checked
    # from the archive (its manifest's signature, then each chain by the same rules).
    archived = ArchivedHistory(tenant)
    # ... unless retention deleted them: their tombstones hold their signed heads
    deleted = DeletedHistory(tenant)
    only = ("pk", "tenant_id", "version", "last_hash", "created_at")
    for wf in workflows.only(*only).iterator(WORKFLOW_BATCH):
        if deleted.holds(wf):
            checked += 1
            sealed.pop(str(wf.pk), None)
            continue
        if archived.holds(wf):
            continue
        batch.append(wf)
        if len(batch) == WORKFLOW_BATCH:
            checked += len(batch)
            breaks.extend(_batch_breaks(batch, sealed, cutoff, accepted, names))
            batch = []
    checked += len(batch)
    breaks.extend(_batch_breaks(batch, sealed, cutoff, accepted, names))
    for kept, problems, rows in archived.checked():
        breaks.extend(Break(None, None, problem) for problem in problems)
        if kept is not None:
            checked += 1
            sealed_heads = sealed.pop(str(kept.pk), [])
            breaks.extend(
                _chain_breaks(
                    kept, iter(rows), sealed_heads, cutoff=cutoff, accepted=accepted, names=names
                )
            )
    breaks.extend(Break(wid, None, problem) for wid, problem in deleted.problems())
    if notes is not None and (note := deleted.note()) is not None:
        notes.append(note)
    return checked


def _accepted_note(breaks: list[Break]) -> list[str]:
    """A sentence on the breaks an accepted override keeps apart, when there are any."""
    kept_apart = [b for b in breaks if b.accepted_by is not None]
    if not kept_apart:
        return []
    numbers = sorted({b.accepted_by for b in kept_apart if b.accepted_by is not None})
    overrides = ", ".join(f"#{n}" for n in numbers)
    events = "; ".join(f"workflow {b.workflow_id} seq {b.seq}" for b in kept_apart[:5])
    if len(kept_apart) > 5:
        events += f"; and {len(kept_apart) - 5} more"
    return [ACCEPTED.format(n=len(kept_apart), overrides=overrides, events=events)]


# user id -> (time, username recorded, workflow, seq) of the user's latest event
_Names = dict[int, tuple[dt.datetime, str | None, str, int]]


def _record_name(names: _Names, wid: str, event: EventRow, recorded: Any) -> None:
    """Keep the username the actor's latest format 3 event recorded."""
    if event.actor_id is None or not isinstance(recorded, dict):
        return
    seen = names.get(event.actor_id)
    if seen is None or event.created_at >= seen[0]:
        names[event.actor_id] = (event.created_at, recorded.get("actor"), wid, event.seq)


def _renamed_users(names: _Names) -> Iterator[Break]:
    """A break for each user whose row's username is not what their latest event
    recorded: one query for every actor met."""
    current = dict(User.objects.filter(pk__in=list(names)).values_list("pk", "username"))
    for user, (_, recorded, wid, seq) in sorted(names.items()):
        now = current.get(user)
        if now != recorded:
            shown = repr(now) if now is not None else "gone"
            what = RENAMED.format(user=user, now=shown, recorded=repr(recorded))
            yield Break(wid, seq, what)


def _accepted_spellings(tenant: Tenant | None, key: bytes) -> dict[tuple[str, int], int]:
    """The events operators accepted as hashed with their numbers as sent: (workflow,
    seq) -> the override's number, from the overrides whose signature verifies."""
    overrides = AuditOverride.objects.filter(action=ACCEPT_ACTION).order_by("pk")
    if tenant is not None:
        overrides = overrides.filter(tenant=tenant)
    accepted: dict[tuple[str, int], int] = {}
    for override in overrides:
        if not override_verifies(override, key=key):
            continue  # a forged or altered record accepts nothing
        for problem in override.problems:
            match = _NAMED_EVENT.match(str(problem))
            if match is not None:
                accepted.setdefault((match.group(1), int(match.group(2))), override.pk)
    return accepted


_NAMED_EVENT = re.compile(r"workflow (\S+) seq (\d+): ")


def _seal_breaks(
    seals: QuerySet[ChainSeal], key: bytes, sealed: dict[str, list[_Sealed]]
) -> Iterator[Break]:
    """Check every seal's signature and each organisation's chain of numbered seals;
    put the heads of the seals that verify in ``sealed``."""
    for seal in seals.filter(number__isnull=True).order_by("sealed_at", "pk").iterator(50):
        problem = seal_problem(seal, key=key)
        if problem is not None:
            yield Break(None, None, f"{seal}: {problem}")
            continue  # a seal that does not verify vouches for nothing
        for workflow_id, (version, last_hash) in seal.heads.items():
            sealed[workflow_id].append(_Sealed(int(version), str(last_hash), seal))
    walks: dict[int, _Walk] = {}
    numbered = seals.filter(number__isnull=False).order_by("tenant_id", "number", "pk")
    for seal in numbered.iterator(50):
        assert seal.tenant is not None and seal.number is not None
        walk = walks.setdefault(seal.tenant.pk, _Walk(seal.tenant.slug))
        if seal.number < walk.next:
            yield Break(
                None, None, SEAL_REPEATED.format(seal=seal, number=seal.number, tenant=walk.tenant)
            )
        elif seal.number > walk.next:
            yield Break(
                None,
                None,
                SEALS_MISSING.format(
                    first=walk.next, last=seal.number - 1, tenant=walk.tenant, next=seal.number
                ),
            )
        if (seal.prev_signature or "") != walk.prev_signature:
            yield Break(None, None, SEAL_UNLINKED.format(seal=seal))
        walk.next = seal.number + 1
        walk.prev_signature = seal.signature
        problem = seal_problem(seal, key=key)
        if problem is not None:
            yield Break(None, None, f"{seal}: {problem}")
            walk.last = None
            continue
        walk.last = seal
        for workflow_id, (version, last_hash) in seal.heads.items():
            walk.heads[workflow_id] = (int(version), str(last_hash))
            sealed[workflow_id].append(_Sealed(int(version), str(last_hash), seal))
    for walk in walks.values():
        last = walk.last
        if last is None:
            continue
        if len(walk.heads) != last.count or heads_digest(walk.heads) != last.digest:
            yield Break(
                None,
                None,
                SEALS_DISAGREE.format(seal=last, tenant=walk.tenant, count=last.count),
            )


def _events(workflow_id: uuid.UUID | str) -> Iterator[tuple[object, ...]]:
    rows = WorkflowEvent.objects.filter(workflow_id=workflow_id).order_by("seq")
    yield from rows.values_list(*_EVENT_FIELDS)


def _batch_breaks(
    batch: list[Workflow],
    sealed: dict[str, list[_Sealed]],
    cutoff: tuple[dt.datetime, int] | None,
    accepted: dict[tuple[str, int], int],
    names: _Names | None = None,
) -> Iterator[Break]:
    if not batch:
        return
    rows = (
        WorkflowEvent.objects.filter(
            workflow_id__in=[wf.pk for wf in batch],
            # prunes to the batch's partitions; an event moved to another month is
            # then missing from its chain, which is reported
            history_month__in={history_month(wf.created_at) for wf in batch},
        )
        .order_by("workflow_id", "seq")
        .values_list(*_EVENT_FIELDS)
    )
    by_workflow: dict[str, list[tuple[object, ...]]] = defaultdict(list)
    for row in rows.iterator(2000):
        by_workflow[str(row[0])].append(row)
    for wf in batch:
        key = str(wf.pk)
        yield from _chain_breaks(
            wf,
            iter(by_workflow.pop(key, [])),
            sealed.pop(key, []),
            cutoff=cutoff,
            accepted=accepted,
            names=names,
        )


def _chain_breaks(
    wf: Workflow,
    rows: Iterator[tuple[object, ...]],
    sealed: list[_Sealed],
    *,
    cutoff: tuple[dt.datetime, int] | None,
    accepted: dict[tuple[str, int], int] | None = None,
    names: _Names | None = None,
) -> Iterator[Break]:
    """The breaks in one workflow's chain (and, into ``names``, the username each actor's
    latest event recorded); with ``cutoff`` (a time, and how many minutes
    before now it is), also its first event older than that which no seal covers. An
    event that verifies only with its numbers as sent is a break naming them
    (SENT_SPELLING), marked accepted when an override in ``accepted`` names it."""
    wid = str(wf.pk)
    stored_at: dict[int, str] = {}
    want = {head.version for head in sealed}
    covered = max(want, default=0)
    prev = ""
    last_seq = 0
    last_format = HASH_V1
    n = len(EventRow._fields)
    for row in rows:
        event = EventRow(*row[:n])  # type: ignore[arg-type]
        tenant_id, schema_version, result, hash_format, recorded = row[n : n + 5]
        stored = str(row[-1])
        if event.seq != last_seq + 1:
            yield Break(wid, last_seq + 1, f"missing (the next event is seq {event.seq})")
        if event.prev_hash != prev:
            yield Break(wid, event.seq, "does not link to the event before it (prev_hash)")
        if tenant_id != wf.tenant_id:
            yield Break(wid, event.seq, OTHER_TENANT)
        expected = _expected_hash(event, hash_format, tenant_id, schema_version, result, recorded)
        if expected is None:
            yield Break(wid, event.seq, UNKNOWN_FORMAT.format(format=hash_format))
        elif expected != stored:
            yield _mismatch(
                wid,
                event,
                (hash_format, tenant_id, schema_version, result, recorded),
                stored,
                accepted,
            )
        format_ = int(hash_format) if isinstance(hash_format, int) else HASH_V1
        if names is not None and format_ == HASH_V3:
            _record_name(names, wid, event, recorded)
        if format_ < last_format:
            yield Break(wid, event.seq, OLDER_FORMAT)
        last_format = max(last_format, format_)
        if cutoff is not None and event.seq == covered + 1 and event.created_at < cutoff[0]:
            yield Break(wid, event.seq, UNSEALED.format(at=event.created_at, minutes=cutoff[1]))
        if event.seq in want:
            stored_at[event.seq] = stored
        prev = stored
        last_seq = event.seq
    yield from _chain_end_breaks(wf, sealed, last_seq=last_seq, last_hash=prev, stored_at=stored_at)


def _chain_end_breaks(
    wf: Workflow, sealed: list[_Sealed], *, last_seq: int, last_hash: str, stored_at: dict[int, str]
) -> Iterator[Break]:
    """What one workflow's chain lacks once walked (to ``last_seq``, ending in
    ``last_hash``): the events up to its recorded version and last hash, and each head
    a seal vouches for (``stored_at``: the hashes of those seqs as stored)."""
    wid = str(wf.pk)
    if last_seq < wf.version:
        yield Break(
            wid,
            last_seq + 1,
            f"events {last_seq + 1}..{wf.version} are gone (the workflow records version "
            f"{wf.version})",
        )
    elif last_seq > wf.version:
        yield Break(wid, wf.version + 1, f"events past the recorded version {wf.version}")
    if last_hash != wf.last_hash:
        yield Break(wid, last_seq or None, "the last event's hash is not the workflow's last_hash")
    for head in sealed:
        if head.seal.tenant_id is not None and head.seal.tenant_id != wf.tenant_id:
            yield Break(wid, None, SEALED_ELSEWHERE.format(seal=head.seal))
        got = stored_at.get(head.version)
        if got is None:
            yield Break(wid, head.version, f"sealed by {head.seal}, now missing")
        elif got != head.last_hash:
            yield Break(
                wid, head.version, f"no longer matches the head sealed by {head.seal} (rewritten)"
            )


def _mismatch(
    wid: str,
    event: EventRow,
    columns: tuple[Any, Any, Any, Any, Any],
    stored: str,
    accepted: dict[tuple[str, int], int] | None,
) -> Break:
    """``columns``: the event's hash format, tenant, schema version, result and recorded."""
    hash_format, tenant_id, schema_version, result, recorded = columns
    for hashed, words in sent_spellings(
        event,
        hash_format=hash_format if isinstance(hash_format, int) else None,
        tenant_id=int(tenant_id),
        schema_version=int(schema_version),
        result=result,
        recorded=recorded,
    ):
        if hashed == stored:
            by = (accepted or {}).get((wid, event.seq))
            what = SENT_SPELLING.format(words=words)
            return Break(wid, event.seq, what, respelled=words, accepted_by=by)
    return Break(wid, event.seq, EDITED)


def _expected_hash(
    event: EventRow,
    hash_format: Any,
    tenant_id: Any,
    schema_version: Any,
    result: Any,
    recorded: Any,
) -> str | None:
    return stored_event_hash(
        event,
        hash_format=hash_format if isinstance(hash_format, int) else None,
        tenant_id=int(tenant_id),
        schema_version=int(schema_version),
        result=result,
        recorded=recorded,
    )
