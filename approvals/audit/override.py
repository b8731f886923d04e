"""An operator's decision to go ahead although ``verify_audit`` failed, kept where it
cannot be quietly taken back: a row in the append-only ``AuditOverride`` table, signed
with the seal key (a row forged or altered without the key does not verify), and a
warning in the log."""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import logging
from collections.abc import Sequence

from .. import clock
from ..models import Tenant
from .models import AuditOverride
from .seal import key_id, seal_key

logger = logging.getLogger("approvals.audit")

_FORMAT = "approvals-audit-override-v1"


def override_signature(*, key: bytes, override: AuditOverride) -> str:
    message = "\n".join(
        (
            _FORMAT,
            str(override.tenant_id or "*"),
            override.at.isoformat(),
            override.action,
            override.operator,
            override.reason,
            json.dumps(override.problems, sort_keys=True, separators=(",", ":")),
        )
    ).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def override_record(
    *, tenant: Tenant | None, action: str, reason: str, problems: Sequence[str]
) -> AuditOverride:
    """Record and log that ``action`` goes ahead on a history with ``problems``."""
    key = seal_key()
    try:
        operator = getpass.getuser()
    except (KeyError, OSError):  # no name for this process's user
        operator = "unknown"
    override = AuditOverride(
        tenant=tenant,
        at=clock.now(),
        action=action,
        operator=operator[:150],
        reason=reason,
        problems=list(problems),
        key_id=key_id(key),
    )
    override.signature = override_signature(key=key, override=override)
    override.save()
    logger.warning(
        "audit override #%s action=%s tenant=%s operator=%s problems=%s reason=%r signature=%s",
        override.pk,
        action,
        tenant.slug if tenant else "*",
        override.operator,
        len(override.problems),
        reason,
        override.signature,
    )
    return override


def override_verifies(override: AuditOverride, *, key: bytes) -> bool:
    expected = override_signature(key=key, override=override)
    return override.key_id == key_id(key) and hmac.compare_digest(expected, override.signature)
