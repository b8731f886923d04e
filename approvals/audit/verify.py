"""Proof that nothing was altered: every hash chain recomputed, each compared with its
workflow's recorded ``version`` and ``last_hash`` (so a deleted tail is found), and
checked against the signed seals of chain heads (so a chain recomputed after an edit
is found too). Each problem is a ``Break`` naming the workflow, the seq and what."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from ..models import Tenant, Workflow, WorkflowEvent
from ..runtime.chain import EventRow, event_hash
from .models import ChainSeal
from .seal import SealKeyMissing, seal_key, seal_problem

# Workflows whose events are fetched per query: bounds memory on a year of history.
WORKFLOW_BATCH = 500
_EVENT_FIELDS = (*EventRow._fields, "hash")


@dataclass(frozen=True)
class Break:
    workflow_id: str | None
    seq: int | None
    what: str

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


def chain_verify(*, workflow: Workflow) -> int | None:
    """The seq of the first event of ``workflow`` whose hash or link does not match, or
    None when its chain is intact."""
    breaks = list(_chain_breaks(workflow, _events(workflow.pk), sealed=[]))
    seqs = [b.seq for b in breaks if b.seq is not None]
    return min(seqs) if seqs else (workflow.version if breaks else None)


def audit_verify(*, tenant: Tenant | None = None) -> tuple[list[Break], int]:
    """Every break in the chains of ``tenant`` (every organisation when None), and the
    number of workflows checked."""
    breaks: list[Break] = []
    seals = ChainSeal.objects.select_related("tenant").order_by("sealed_at", "pk")
    workflows = Workflow.objects.order_by("pk")
    if tenant is not None:
        seals = seals.filter(tenant=tenant)
        workflows = workflows.filter(tenant=tenant)
    sealed: dict[str, list[_Sealed]] = defaultdict(list)
    try:
        key: bytes | None = seal_key()
    except SealKeyMissing as exc:
        key = None
        if seals.exists():
            breaks.append(Break(None, None, str(exc)))
    if key is not None:
        for seal in seals.iterator(50):
            problem = seal_problem(seal, key=key)
            if problem is not None:
                breaks.append(Break(None, None, f"{seal}: {problem}"))
                continue  # a seal that does not verify vouches for nothing
            for workflow_id, (version, last_hash) in seal.heads.items():
                sealed[workflow_id].append(_Sealed(int(version), str(last_hash), seal))
    checked = 0
    batch: list[Workflow] = []
    for wf in workflows.only("pk", "version", "last_hash").iterator(WORKFLOW_BATCH):
        batch.append(wf)
        if len(batch) == WORKFLOW_BATCH:
            checked += len(batch)
            breaks.extend(_batch_breaks(batch, sealed))
            batch = []
    checked += len(batch)
    breaks.extend(_batch_breaks(batch, sealed))
    for workflow_id, heads in sealed.items():  # what is left was sealed and is gone
        for head in heads:
            breaks.append(
                Break(workflow_id, None, f"sealed at version {head.version} by {head.seal}, gone")
            )
    return breaks, checked


def _events(workflow_id: uuid.UUID | str) -> Iterator[tuple[object, ...]]:
    rows = WorkflowEvent.objects.filter(workflow_id=workflow_id).order_by("seq")
    yield from rows.values_list(*_EVENT_FIELDS)


def _batch_breaks(batch: list[Workflow], sealed: dict[str, list[_Sealed]]) -> Iterator[Break]:
    if not batch:
        return
    rows = (
        WorkflowEvent.objects.filter(workflow_id__in=[wf.pk for wf in batch])
        .order_by("workflow_id", "seq")
        .values_list(*_EVENT_FIELDS)
    )
    by_workflow: dict[str, list[tuple[object, ...]]] = defaultdict(list)
    for row in rows.iterator(2000):
        by_workflow[str(row[0])].append(row)
    for wf in batch:
        key = str(wf.pk)
        yield from _chain_breaks(wf, iter(by_workflow.pop(key, [])), sealed.pop(key, []))


def _chain_breaks(
    wf: Workflow, rows: Iterator[tuple[object, ...]], sealed: list[_Sealed]
) -> Iterator[Break]:
    wid = str(wf.pk)
    stored_at: dict[int, str] = {}
    want = {head.version for head in sealed}
    prev = ""
    last_seq = 0
    for row in rows:
        event = EventRow(*row[:-1])  # type: ignore[arg-type]
        stored = str(row[-1])
        if event.seq != last_seq + 1:
            yield Break(wid, last_seq + 1, f"missing (the next event is seq {event.seq})")
        if event.prev_hash != prev:
            yield Break(wid, event.seq, "does not link to the event before it (prev_hash)")
        if event_hash(event) != stored:
            yield Break(wid, event.seq, "its content does not match its hash (edited)")
        if event.seq in want:
            stored_at[event.seq] = stored
        prev = stored
        last_seq = event.seq
    if last_seq < wf.version:
        yield Break(
            wid,
            last_seq + 1,
            f"events {last_seq + 1}..{wf.version} are gone (the workflow records version "
            f"{wf.version})",
        )
    elif last_seq > wf.version:
        yield Break(wid, wf.version + 1, f"events past the recorded version {wf.version}")
    if prev != wf.last_hash:
        yield Break(wid, last_seq or None, "the last event's hash is not the workflow's last_hash")
    for head in sealed:
        got = stored_at.get(head.version)
        if got is None:
            yield Break(wid, head.version, f"sealed by {head.seal}, now missing")
        elif got != head.last_hash:
            yield Break(
                wid, head.version, f"no longer matches the head sealed by {head.seal} (rewritten)"
            )
