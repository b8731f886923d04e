"""The seal key, read from the settings (never the database): the seals, the daily
seals, the overrides and the export's statement are signed with it."""

from __future__ import annotations

from django.conf import settings

SEAL_KEY_MISSING = (
    "APPROVALS_AUDIT_SEAL_KEY is not set: chain seals cannot be signed or checked. "
    "Set it in the environment (never in the database)."
)
# Used only when DEBUG is on and no key is set, so `make run` can seal.
_DEVELOPMENT_KEY = "approvals-development-seal-key-not-secret"


class SealKeyMissing(RuntimeError):
    pass


def seal_key() -> bytes:
    key = settings.APPROVALS_AUDIT_SEAL_KEY
    if not key:
        if not settings.DEBUG:
            raise SealKeyMissing(SEAL_KEY_MISSING)
        key = _DEVELOPMENT_KEY
    return key.encode()
