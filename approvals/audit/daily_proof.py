"""The reads behind the daily seals (approvals.audit.daily_seal): every workflow's head
at the end of a UTC day, in id order; the day's Merkle root over them; one workflow's
leaf and audit path (its proof); and a seal's fields as the export and the archive
manifest carry them. The hashing is ``offline_verify``'s (standard library only), so
the app and an auditor's machine compute the same root."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection

from ..models import Tenant, Workflow, WorkflowEvent
from .models import DailySeal
from .offline_verify import MerkleRoot, merkle_included, merkle_leaf, merkle_path

_CHUNK = 5000


def day_end(day: dt.date) -> dt.datetime:
    """The end of a UTC day: 00:00 UTC of the next."""
    return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC) + dt.timedelta(days=1)


def _leaves_sql(*, exact: bool) -> str:
    """Each workflow of the organisation created before the day's end, by id: its
    recorded head, and (when it moved after the day's end, or always with ``exact``)
    ``seq:hash`` of its last event written before the day's end. The lookup reads one
    partition, its workflow's month."""
    workflows, events = Workflow._meta.db_table, WorkflowEvent._meta.db_table
    month = " AND ev.history_month = date_trunc('month', w.created_at AT TIME ZONE 'UTC')::date"
    moved = "1 = 1" if exact else "w.updated_at >= %(end)s"
    return (
        f"SELECT w.id, w.version, w.last_hash, CASE WHEN {moved} THEN ("
        f"SELECT ev.seq || ':' || ev.hash FROM {events} ev WHERE ev.workflow_id = w.id{month} "
        "AND ev.created_at < %(end)s ORDER BY ev.seq DESC LIMIT 1) END "
        f"FROM {workflows} w WHERE w.tenant_id = %(tenant)s AND w.created_at < %(end)s "
        "AND w.version > 0 ORDER BY w.id"
    )


def day_leaves(
    tenant_id: int, day: dt.date, *, exact: bool = False
) -> Iterator[tuple[str, int, str]]:
    """(workflow id, seq, hash) of each workflow's head at the end of ``day``, by id.
    Without ``exact`` the recorded head stands for a workflow not updated since the
    day's end (what sealing uses: only the workflows that moved since are looked up);
    with it, every head is read from the events (what ``verify_audit`` uses)."""
    previous = ""
    with connection.chunked_cursor() as cursor:
        cursor.execute(_leaves_sql(exact=exact), {"tenant": tenant_id, "end": day_end(day)})
        while rows := cursor.fetchmany(_CHUNK):
            for pk, version, last_hash, at_end in rows:
                workflow_id = str(pk if isinstance(pk, uuid.UUID) else uuid.UUID(pk))
                if workflow_id <= previous:  # the tree needs the sorted order
                    raise AssertionError("chain heads were not read in id order")
                previous = workflow_id
                if at_end:
                    seq_text, _, head = str(at_end).partition(":")
                    yield workflow_id, int(seq_text), head
                else:
                    yield workflow_id, int(version), str(last_hash)


def day_root(tenant_id: int, day: dt.date, *, exact: bool = False) -> tuple[int, str]:
    """(leaf count, hex root) of the organisation's heads at the end of ``day``."""
    tree = MerkleRoot()
    for workflow_id, seq, head in day_leaves(tenant_id, day, exact=exact):
        tree.add(merkle_leaf(workflow_id, seq, head))
    return tree.count, tree.root()


def seal_fields(seal: DailySeal) -> dict[str, Any]:
    """What a daily seal's signature covers, and the signature: the export's and the
    archive manifest's form of it."""
    return {
        "tenant_id": seal.tenant_id,
        "tenant_slug": seal.tenant.slug,
        "day": seal.day.isoformat(),
        "count": seal.count,
        "root": seal.root,
        "prev_signature": seal.prev_signature,
        "sealed_at": seal.sealed_at.isoformat(),
        "key_id": seal.key_id,
        "signature": seal.signature,
    }


@dataclass(frozen=True)
class Proof:
    """One workflow's place in one day's seal: its leaf (seq and hash of its head at the
    day's end), its index among ``count`` leaves, and the audit path (hex, the sibling
    nearest the leaf first)."""

    tenant_id: int
    tenant_slug: str
    day: dt.date
    workflow_id: str
    seq: int
    hash: str
    index: int
    count: int
    path: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tenant_id": self.tenant_id,
            "tenant_slug": self.tenant_slug,
            "day": self.day.isoformat(),
            "workflow_id": self.workflow_id,
            "seq": self.seq,
            "hash": self.hash,
            "index": self.index,
            "count": self.count,
            "path": self.path,
        }

    def leads_to(self, root: str, count: int) -> bool:
        leaf = merkle_leaf(self.workflow_id, self.seq, self.hash)
        return count == self.count and merkle_included(
            leaf, self.index, self.count, self.path, root
        )


def inclusion_proof(*, tenant: Tenant, workflow_id: uuid.UUID | str, day: dt.date) -> Proof | None:
    """The leaf and audit path of ``workflow_id`` in ``tenant``'s heads at the end of
    ``day``; None when the workflow had no event by then (or is not the
    organisation's). Reads the day's leaves once (32 bytes each held)."""
    wanted = str(uuid.UUID(str(workflow_id)))
    hashes: list[bytes] = []
    found: tuple[int, int, str] | None = None
    for wid, seq, head in day_leaves(tenant.pk, day):
        if wid == wanted:
            found = (len(hashes), seq, head)
        hashes.append(merkle_leaf(wid, seq, head))
    if found is None:
        return None
    index, seq, head = found
    return Proof(
        tenant.pk,
        tenant.slug,
        day,
        wanted,
        seq,
        head,
        index,
        len(hashes),
        merkle_path(hashes, index),
    )
