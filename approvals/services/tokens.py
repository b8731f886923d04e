"""API tokens: issue, check, revoke.

A token's secret is 32 random bytes (URL-safe base64) and is returned once, by
``token_issue``; the table keeps its SHA-256 (``digest``), so a copy of the database
holds nothing a client could send. A secret of that strength needs no slow hash: the
lookup is one indexed equality on ``digest``.

Issuing a token never revokes the user's other tokens: clients rotate by issuing a new
one and revoking the old (``POST /api/auth/logout`` with the old one). Every token of a
user is revoked when the user's password changes or the user is deactivated (the
``User`` save signals connected by ``connect_signals``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group
from django.db.models.signals import post_save, pre_save

from .. import access, clock
from ..models import ApiToken, User
from ..runtime import store, tenant_scope

TOKEN_UNKNOWN = "This token is not valid."
TOKEN_EXPIRED = "This token has expired; ask for a new one."
TOKEN_REVOKED = "This token has been revoked."
USER_INACTIVE = "This account is disabled."

# What a token may be given: a lifetime of at most ten years (a longer one overflows
# dates, or outlives the stored range of times), a name as long as its column, and no
# NUL (PostgreSQL's text and jsonb refuse it).
TTL_MAX_SECONDS = 10 * 365 * 86400
NAME_MAX = ApiToken._meta.get_field("name").max_length or 100
TTL_OUT_OF_RANGE = f"A token lives from 1 second to {TTL_MAX_SECONDS:,} seconds (ten years)."
NAME_TOO_LONG = f"A token's name has at most {NAME_MAX} characters."
TEXT_NUL = "A token's name, template keys and signal names may not hold a NUL character."


class TokenInvalid(ValueError):
    """What a token was to be given is out of range; the message says what."""


# last_used_at is written when it is older than this, not on every request.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)
PREFIX_LENGTH = 8


_ROLE_NAMES = [r.value for r in access.Role]


@cache
def _lookup_sql() -> str:
    groups = User.groups.through._meta.db_table
    marks = ", ".join(["%s"] * len(_ROLE_NAMES))
    names = "STRING_AGG(g.name, E'\\n')"
    roles = (
        f"(SELECT {names} FROM {store.table(Group)} g JOIN {groups} ug ON ug.group_id = g.id"
        f" WHERE ug.user_id = t.user_id AND g.name IN ({marks}))"
    )
    return (
        f"SELECT {store.columns(ApiToken, 't')}, {store.columns(User, 'u')}, {roles}"
        f" FROM {store.table(ApiToken)} t JOIN {store.table(User)} u ON u.id = t.user_id"
        " WHERE t.digest = %s"
    )


class TokenRefused(Exception):
    """The secret names no usable token; the message says why."""


def token_digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@tenant_scope.atomic_for_tenant_of("user")
def token_issue(
    *,
    user: User,
    name: str = "",
    ttl_seconds: int | None = None,
    may_start: list[str] | None = None,
    may_signal: list[str] | None = None,
) -> tuple[ApiToken, str]:
    """Create a token for ``user``; returns it and its secret, which is not stored.
    Raises TokenInvalid for a lifetime, a name or a text out of range."""
    ttl = settings.APPROVALS_TOKEN_TTL_SECONDS if ttl_seconds is None else ttl_seconds
    if not 0 < ttl <= TTL_MAX_SECONDS:
        raise TokenInvalid(TTL_OUT_OF_RANGE)
    if len(name) > NAME_MAX:
        raise TokenInvalid(NAME_TOO_LONG)
    if any("\x00" in text for text in (name, *(may_start or ()), *(may_signal or ()))):
        raise TokenInvalid(TEXT_NUL)
    secret = secrets.token_urlsafe(32)
    now = clock.now()
    token = ApiToken.objects.create(
        user=user,
        name=name,
        digest=token_digest(secret),
        prefix=secret[:PREFIX_LENGTH],
        created_at=now,
        expires_at=now + dt.timedelta(seconds=ttl),
        may_start=list(may_start) if may_start is not None else None,
        may_signal=list(may_signal) if may_signal is not None else None,
    )
    return token, secret


def token_authenticate(*, secret: str) -> ApiToken:
    """The live token whose secret this is, with its user loaded; raises TokenRefused."""
    # One indexed lookup: the token, its user, and the user's roles. Plain SQL: it runs
    # on every API request, and building it through the ORM cost more than running it.
    rows = store.fetch(_lookup_sql(), [*_ROLE_NAMES, token_digest(secret)], prepare=True)
    if not rows:
        raise TokenRefused(TOKEN_UNKNOWN)
    row = rows[0]
    split = len(ApiToken._meta.concrete_fields)
    token = store.instance(ApiToken, row[:split])
    token.user = store.instance(User, row[split:-1])
    access.roles_known(token.user, (row[-1] or "").split("\n"))
    now = clock.now()
    if token.revoked_at is not None:
        raise TokenRefused(TOKEN_REVOKED)
    if token.expires_at <= now:
        raise TokenRefused(TOKEN_EXPIRED)
    if not token.user.is_active:
        raise TokenRefused(USER_INACTIVE)
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def token_revoke(*, token: ApiToken) -> None:
    """Revoke one token; revoking a revoked token keeps its first revocation time."""
    now = clock.now()
    with tenant_scope.atomic_for(token.user):
        ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now)
        token.refresh_from_db(fields=["revoked_at"])


@tenant_scope.atomic_for_tenant_of("user")
def tokens_revoke_for_user(*, user: User) -> int:
    """Revoke every live token of ``user``; returns how many were revoked."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).update(
        revoked_at=clock.now()
    )


# --- revocation when the password changes or the account is disabled -------------------

_CREDENTIAL_FIELDS = {"password", "is_active"}


def _remember_credentials(sender: Any, instance: User, update_fields: Any = None, **_: Any) -> None:
    instance._revoke_tokens = False  # type: ignore[attr-defined]
    if instance.pk is None:
        return
    if update_fields is not None and not _CREDENTIAL_FIELDS & set(update_fields):
        return  # e.g. the last_login update on every sign-in: nothing to compare
    before = User.objects.filter(pk=instance.pk).values("password", "is_active").first()
    if before is None:
        return
    changed_password = before["password"] != instance.password
    deactivated = before["is_active"] and not instance.is_active
    instance._revoke_tokens = changed_password or deactivated  # type: ignore[attr-defined]


def _revoke_if_credentials_changed(sender: Any, instance: User, **_: Any) -> None:
    if getattr(instance, "_revoke_tokens", False):
        tokens_revoke_for_user(user=instance)
        instance._revoke_tokens = False  # type: ignore[attr-defined]


def connect_signals() -> None:
    """Called once from ``ApprovalsConfig.ready``."""
    pre_save.connect(_remember_credentials, sender=User, dispatch_uid="apitoken-credentials")
    post_save.connect(
        _revoke_if_credentials_changed, sender=User, dispatch_uid="apitoken-credentials"
    )
