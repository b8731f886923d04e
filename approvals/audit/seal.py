"""Seals over the chain heads. Anyone with write access to the database can recompute a
whole hash chain after an edit; they cannot sign a seal without the key, which lives in
the environment (``APPROVALS_AUDIT_SEAL_KEY``), never in the database. A seal records
every chain head of one organisation at one moment; ``verify_audit`` later finds any
chain whose event at a sealed version no longer carries the sealed hash."""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.db import transaction

from .. import clock
from ..models import Tenant, Workflow
from .models import ChainSeal

logger = logging.getLogger("approvals.audit")

SEAL_KEY_MISSING = (
    "APPROVALS_AUDIT_SEAL_KEY is not set: chain seals cannot be signed or checked. "
    "Set it in the environment (never in the database)."
)
# Used only when DEBUG is on and no key is set, so `make run` can seal.
_DEVELOPMENT_KEY = "approvals-development-seal-key-not-secret"
_FORMAT = "approvals-chain-seal-v1"


class SealKeyMissing(RuntimeError):
    pass


def seal_key() -> bytes:
    key = settings.APPROVALS_AUDIT_SEAL_KEY
    if not key:
        if not settings.DEBUG:
            raise SealKeyMissing(SEAL_KEY_MISSING)
        key = _DEVELOPMENT_KEY
    return key.encode()


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


def chain_heads(*, tenant: Tenant) -> dict[str, tuple[int, str]]:
    """Every workflow of ``tenant`` that has events: id -> (version, last_hash)."""
    rows = (
        Workflow.objects.filter(tenant=tenant, version__gt=0)
        .order_by("pk")
        .values_list("pk", "version", "last_hash")
    )
    return {str(pk): (version, last_hash) for pk, version, last_hash in rows.iterator(5000)}


def seal_create(*, tenant: Tenant) -> ChainSeal:
    """Record and log a signed seal of every chain head of ``tenant``."""
    key = seal_key()
    with transaction.atomic():
        # REPEATABLE READ is not needed: a head that moves while we read is sealed at
        # the version read, and the chain keeps that event forever.
        heads = chain_heads(tenant=tenant)
        sealed_at = clock.now()
        digest = heads_digest(heads)
        signature = seal_signature(
            key=key,
            tenant_slug=tenant.slug,
            sealed_at=sealed_at.isoformat(),
            count=len(heads),
            digest=digest,
        )
        seal = ChainSeal.objects.create(
            tenant=tenant,
            sealed_at=sealed_at,
            count=len(heads),
            digest=digest,
            heads={k: list(v) for k, v in heads.items()},
            key_id=key_id(key),
            signature=signature,
        )
    logger.info(
        "chain seal #%s tenant=%s sealed_at=%s count=%s digest=%s key_id=%s signature=%s",
        seal.pk,
        tenant.slug,
        sealed_at.isoformat(),
        len(heads),
        digest,
        seal.key_id,
        signature,
    )
    return seal


def seal_all(*, tenants: Iterable[Tenant] | None = None) -> list[ChainSeal]:
    """One seal per organisation (the daily job)."""
    chosen = Tenant.objects.order_by("pk") if tenants is None else tenants
    return [seal_create(tenant=t) for t in chosen]


def seal_problem(seal: ChainSeal, *, key: bytes) -> str | None:
    """Why ``seal`` cannot be trusted, or None when its heads and signature check out."""
    heads = seal.heads if isinstance(seal.heads, dict) else {}
    if len(heads) != seal.count:
        return f"holds {len(heads)} heads but says {seal.count}"
    digest = heads_digest(heads)
    if digest != seal.digest:
        return "its heads do not hash to its digest"
    if seal.key_id != key_id(key):
        return f"signed with another key ({seal.key_id}); cannot check it with this one"
    expected = seal_signature(
        key=key,
        tenant_slug=seal.tenant.slug if seal.tenant else "*",
        sealed_at=seal.sealed_at.isoformat(),
        count=seal.count,
        digest=seal.digest,
    )
    if not hmac.compare_digest(expected, seal.signature):
        return "its signature does not verify"
    return None
