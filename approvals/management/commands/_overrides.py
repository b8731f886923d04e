"""An operator's decision to go ahead over failed verification, as the commands that
allow one record it: a reason is required, and a missing seal key is a one-line error."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from approvals.audit.override import override_record
from approvals.audit.seal import SealKeyMissing


def override_from_command(
    *, tenant: Any, action: str, reason: str, problems: list[str], reason_needed: str
) -> Any:
    """The recorded override (append-only, signed), or a CommandError in words."""
    reason = reason.strip()
    if not reason:
        raise CommandError(reason_needed)
    try:
        return override_record(tenant=tenant, action=action, reason=reason, problems=problems)
    except SealKeyMissing as exc:
        raise CommandError(str(exc)) from exc
