"""Seals over the chain heads. Anyone with write access to the database can recompute a
whole hash chain after an edit; they cannot sign a seal without the key, which lives in
the environment (``APPROVALS_AUDIT_SEAL_KEY``), never in the database.

An organisation's seals form a chain of their own: seal n carries its number and the
signature of seal n - 1, and is signed over both, so a seal deleted or rewritten in the
middle breaks the chain. Each seal lists the heads that moved since the one before
(what the ``SealedHead`` rows remember) and a digest over every head, so the cost of a
seal's row is the change since the last one while the seals together still name every
workflow: ``verify_audit`` finds a workflow deleted after it was sealed. The
periodic job seals, every ``APPROVALS_AUDIT_SEAL_INTERVAL_SECONDS``, the organisations
whose heads moved; ``verify_audit`` reports any event older than two intervals that no
seal covers, which is how seals deleted at the end of the chain (or all of them) show."""

from __future__ import annotations

import hashlib
import hmac
import logging
import uuid
from collections.abc import Iterable, Mapping

from django.db import connection, transaction

from .. import clock
from ..models import Tenant, Workflow
from .keys import SEAL_KEY_MISSING as SEAL_KEY_MISSING  # re-exported: one rule, in keys
from .keys import SealKeyMissing as SealKeyMissing
from .keys import seal_key
from .models import ChainSeal, SealedHead

logger = logging.getLogger("approvals.audit")

_FORMAT = "approvals-chain-seal-v1"
_CHAINED_FORMAT = "approvals-chain-seal-v2"
# Heads read, and sealed heads written, per round trip.
_CHUNK = 5000


def key_id(key: bytes) -> str:
    """A short fingerprint naming the key a seal was signed with (not the key)."""
    return hashlib.sha256(b"key-id:" + key).hexdigest()[:16]


def heads_digest(heads: Mapping[str, tuple[int, str] | list[object]]) -> str:
    """SHA-256 of the sorted ``workflow_id:version:last_hash`` lines."""
    h = hashlib.sha256()
    for workflow_id in sorted(heads):
        version, last_hash = heads[workflow_id]
        h.update(f"{workflow_id}:{version}:{last_hash}\n".encode())
    return h.hexdigest()


def _message(*, tenant_slug: str, sealed_at: str, count: int, digest: str) -> bytes:
    return f"{_FORMAT}\n{tenant_slug}\n{sealed_at}\n{count}\n{digest}".encode()


def seal_signature(*, key: bytes, tenant_slug: str, sealed_at: str, count: int, digest: str) -> str:
    message = _message(tenant_slug=tenant_slug, sealed_at=sealed_at, count=count, digest=digest)
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def chained_signature(
    *,
    key: bytes,
    tenant_id: int,
    tenant_slug: str,
    number: int,
    prev_signature: str,
    sealed_at: str,
    count: int,
    digest: str,
    changes_digest: str,
) -> str:
    """The HMAC-SHA256 of a chained seal: over its place in the chain (organisation,
    number, the previous seal's signature), its time, every head's digest and count,
    and the digest of the heads it lists."""
    message = "\n".join(
        (
            _CHAINED_FORMAT,
            str(tenant_id),
            tenant_slug,
            str(number),
            prev_signature,
            sealed_at,
            str(count),
            digest,
            changes_digest,
        )
    ).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def _heads_sql() -> str:
    workflows, sealed = Workflow._meta.db_table, SealedHead._meta.db_table
    return (
        f"SELECT w.id, w.version, w.last_hash, s.version, s.last_hash FROM {workflows} w "
        f"LEFT JOIN {sealed} s ON s.workflow_id = w.id "
        "WHERE w.tenant_id = %s AND w.version > 0 ORDER BY w.id"
    )


def _moved_heads(tenant: Tenant) -> tuple[int, str, dict[str, tuple[int, str]]]:
    """One pass over the organisation's heads, in id order (a single statement, so one
    snapshot): how many, the digest over all of them, and those that moved since the
    last seal. Memory holds only the moved ones."""
    digest = hashlib.sha256()
    moved: dict[str, tuple[int, str]] = {}
    count = 0
    previous = ""
    with connection.chunked_cursor() as cursor:
        cursor.execute(_heads_sql(), [tenant.pk])
        while rows := cursor.fetchmany(_CHUNK):
            for pk, version, last_hash, sealed_version, sealed_hash in rows:
                workflow_id = str(pk if isinstance(pk, uuid.UUID) else uuid.UUID(pk))
                if workflow_id <= previous:  # the digest needs the sorted order
                    raise AssertionError("chain heads were not read in id order")
                previous = workflow_id
                count += 1
                digest.update(f"{workflow_id}:{version}:{last_hash}\n".encode())
                if sealed_version != version or sealed_hash != last_hash:
                    moved[workflow_id] = (version, last_hash)
    return count, digest.hexdigest(), moved


def seal_create(*, tenant: Tenant, only_changed: bool = False) -> ChainSeal | None:
    """Record and log the organisation's next chained seal; with ``only_changed``, none
    when no head moved since the last one (None is returned)."""
    key = seal_key()
    with transaction.atomic():
        # One sealer at a time per organisation, so numbers do not collide. NO KEY
        # UPDATE: rows that refer to the tenant are not held up.
        Tenant.objects.select_for_update(no_key=True).filter(pk=tenant.pk).first()
        last = (
            ChainSeal.objects.filter(tenant=tenant, number__isnull=False)
            .order_by("-number", "-pk")
            .only("number", "signature", "count")
            .first()
        )
        count, digest, moved = _moved_heads(tenant)
        if only_changed and last is not None and not moved and count == last.count:
            return None
        number = (last.number or 0) + 1 if last is not None else 1
        prev_signature = last.signature if last is not None else ""
        sealed_at = clock.now()
        signature = chained_signature(
            key=key,
            tenant_id=tenant.pk,
            tenant_slug=tenant.slug,
            number=number,
            prev_signature=prev_signature,
            sealed_at=sealed_at.isoformat(),
            count=count,
            digest=digest,
            changes_digest=heads_digest(moved),
        )
        seal = ChainSeal.objects.create(
            tenant=tenant,
            sealed_at=sealed_at,
            count=count,
            digest=digest,
            heads={k: list(v) for k, v in moved.items()},
            key_id=key_id(key),
            signature=signature,
            number=number,
            prev_signature=prev_signature,
        )
        _remember(tenant, moved)
    logger.info(
        "chain seal #%s tenant=%s number=%s prev=%s sealed_at=%s count=%s moved=%s "
        "digest=%s key_id=%s signature=%s",
        seal.pk,
        tenant.slug,
        number,
        prev_signature or "-",
        sealed_at.isoformat(),
        count,
        len(moved),
        digest,
        seal.key_id,
        signature,
    )
    return seal


def _remember(tenant: Tenant, moved: Mapping[str, tuple[int, str]]) -> None:
    rows = [
        SealedHead(workflow_id=uuid.UUID(k), tenant=tenant, version=v, last_hash=h)
        for k, (v, h) in moved.items()
    ]
    SealedHead.objects.bulk_create(
        rows,
        batch_size=_CHUNK,
        update_conflicts=True,
        unique_fields=["workflow_id"],
        update_fields=["version", "last_hash"],
    )


def seal_all(
    *, tenants: Iterable[Tenant] | None = None, only_changed: bool = False
) -> list[ChainSeal]:
    """The next seal of each organisation (the periodic job: only those whose heads
    moved)."""
    chosen = Tenant.objects.order_by("pk") if tenants is None else tenants
    made = (seal_create(tenant=t, only_changed=only_changed) for t in chosen)
    return [seal for seal in made if seal is not None]


def seal_problem(seal: ChainSeal, *, key: bytes) -> str | None:
    """Why ``seal`` cannot be trusted, or None when its heads and signature check out.
    Its place in the chain (number, previous signature) is ``verify``'s to check."""
    heads = seal.heads if isinstance(seal.heads, dict) else {}
    if seal.number is None and len(heads) != seal.count:
        return f"holds {len(heads)} heads but says {seal.count}"
    if seal.number is None and heads_digest(heads) != seal.digest:
        return "its heads do not hash to its digest"
    if seal.key_id != key_id(key):
        return f"signed with another key ({seal.key_id}); cannot check it with this one"
    if seal.number is None:
        expected = seal_signature(
            key=key,
            tenant_slug=seal.tenant.slug if seal.tenant else "*",
            sealed_at=seal.sealed_at.isoformat(),
            count=seal.count,
            digest=seal.digest,
        )
    elif seal.tenant is None:
        return "a numbered seal without an organisation"
    else:
        expected = chained_signature(
            key=key,
            tenant_id=seal.tenant.pk,
            tenant_slug=seal.tenant.slug,
            number=seal.number,
            prev_signature=seal.prev_signature or "",
            sealed_at=seal.sealed_at.isoformat(),
            count=seal.count,
            digest=seal.digest,
            changes_digest=heads_digest(heads),
        )
    if not hmac.compare_digest(expected, seal.signature):
        return "its signature does not verify"
    return None
