"""Row-level security: the tenant a transaction acts for (PostgreSQL; migration 0035).

Every table with a ``tenant_id`` carries the policy ``tenant_isolation``: the role
``approvals_app`` sees and writes only the rows whose tenant is the transaction's
``approvals.tenant`` setting, and nothing at all when none is set. ``acting_for``
switches the current transaction to that role and tenant, both transaction-local
(``set_config(..., true)`` is ``SET LOCAL``), so nothing outlives the transaction: safe
behind PgBouncer in transaction pooling, where the next transaction on the same server
connection may be another node's. Work that crosses tenants (the timer poller's claim,
the archiver, the mail sender, the activity runner, the superuser's admin, management
commands) stays on the login role, a member of ``approvals_system`` (docs/operations.md).

The command path (``commands.command_execute``, ``workflow_start``) acts for the
workflow's tenant inside ``store.pipelined``, where the statement travels in the first
round trip with BEGIN and the lock (no round trip of its own); page and API reads of a
signed-in member go through ``TenantScopeMiddleware`` (approvals/http/middleware.py). The
use-cases that write outside the command path (templates, delegations, the directory,
drafts, schedules, API tokens, the organisation's settings, legal holds) run in one
transaction acting for their tenant: ``atomic_for`` and its decorator ``atomic_for_tenant_of``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction

from ..models import Tenant
from . import store

F = TypeVar("F", bound=Callable[..., Any])

APP_ROLE = "approvals_app"
SYSTEM_ROLE = "approvals_system"
TENANT_SETTING = "approvals.tenant"

SEAL_SETTING = "approvals.tenant_seal"

# Both settings in one statement: the role is a setting too (``SET ROLE`` is
# ``set_config('role', ...)``), and the pair in one SELECT costs one statement. The
# tenant is set (and sealed) by ``approvals_act_for`` on the login role, between the
# switch back to it (a timer group acts for one organisation after another in one
# transaction) and the switch to the app role: under ``approvals_app`` it refuses, and
# a tenant set by hand has no seal, so the app role cannot act for another
# organisation in its transaction (approvals/sql/functions/approvals_act_for.sql).
# The select list runs left to right.
ACT_SQL = (
    "SELECT set_config('role', 'none', true), approvals_act_for(%s::bigint),"
    f" set_config('role', '{APP_ROLE}', true)"
)
# The same, for a command's own transaction that counts its tasks' inbox changes itself
# (store.pipelined(count_inbox=True)): the task triggers read the setting and skip it.
ACT_COUNTED_SQL = f"{ACT_SQL}, {store.INBOX_COUNTED_SQL}"
# Inside a transaction that goes on after the block (a test's, or a use-case grouping
# several commands): what was set before, read and replaced in one statement (back on
# the login role for the moment of the switch).
_SWAP_SQL = (
    "WITH before AS MATERIALIZED (SELECT current_setting('role') AS r,"
    f" current_setting('{TENANT_SETTING}', true) AS t,"
    f" current_setting('{SEAL_SETTING}', true) AS s)"
    " SELECT r, t, s, set_config('role', 'none', true), approvals_act_for(%s::bigint),"
    f" set_config('role', '{APP_ROLE}', true) FROM before"
)
_CROSS_TENANT_SQL = (
    f"SELECT set_config('role', 'none', true), set_config('{TENANT_SETTING}', '', true),"
    f" set_config('{SEAL_SETTING}', '', true)"
)
# What was set before, seal included (a seal holds for its own transaction only).
_RESTORE_SQL = (
    f"SELECT set_config('role', %s, true), set_config('{TENANT_SETTING}', %s, true),"
    f" set_config('{SEAL_SETTING}', %s, true)"
)

NOT_IN_TRANSACTION = "acting_for needs a transaction: SET LOCAL would end with the statement."


def enabled(db: Any = None) -> bool:
    """Whether transactions act for their tenant (APPROVALS_ROW_LEVEL_SECURITY)."""
    return bool(settings.APPROVALS_ROW_LEVEL_SECURITY)


def _ends_with_block(db: Any) -> bool:
    """The transaction ends when the caller's block does: the command path's own
    pipelined transaction (no atomic block of Django's) or an outermost ``atomic``.
    Then nothing needs restoring; COMMIT or ROLLBACK ends both settings."""
    return len(db.atomic_blocks) <= 1


@contextlib.contextmanager
def acting_for(tenant_id: int) -> Iterator[None]:
    """The rest of the block acts as ``approvals_app`` for ``tenant_id``: an unfiltered
    query finds that tenant's rows only, and a write of another tenant's row is refused
    by the database. Call inside a transaction (``atomic`` or ``store.pipelined``).

    When the transaction goes on after the block, the role and tenant set before are
    put back on the way out; on an error the enclosing savepoint's rollback undoes them
    (a setting made inside a savepoint is rolled back with it)."""
    db: Any = connections[DEFAULT_DB_ALIAS]
    if not enabled(db):
        yield
        return
    if not db.in_atomic_block:
        raise RuntimeError(NOT_IN_TRANSACTION)
    tenant_id = int(tenant_id)
    before = getattr(db, "approvals_acting_for", None)
    if before == tenant_id:
        # A command inside a use-case that already acts for its tenant (a draft's
        # submission starting its workflow, a deactivation handing on every task):
        # nothing to switch, and no round trip.
        yield
        return
    db.approvals_acting_for = tenant_id
    try:
        if _ends_with_block(db):
            # Through the command path's runner: inside ``store.pipelined`` it travels
            # with BEGIN and the first reads instead of taking a round trip of its own.
            if getattr(db, "approvals_inbox_counted", None) == "asked":
                store.send(ACT_COUNTED_SQL, [str(tenant_id)])
                db.approvals_inbox_counted = "on"
            else:
                store.send(ACT_SQL, [str(tenant_id)])
            yield
            return
        with db.cursor() as cursor:
            cursor.execute(_SWAP_SQL, [str(tenant_id)])
            role, tenant, seal = cursor.fetchone()[:3]
        yield
        with db.cursor() as cursor:
            cursor.execute(_RESTORE_SQL, [role, tenant or "", seal or ""])
    finally:
        db.approvals_acting_for = before


def cross_tenant_again() -> None:
    """The rest of the transaction on the login role again, after ``acting_for`` blocks
    whose settings outlive them (the command path's: they end with the transaction).
    Inside ``store.pipelined`` the statement travels with the next round trip."""
    db: Any = connections[DEFAULT_DB_ALIAS]
    if enabled(db) and db.in_atomic_block and _ends_with_block(db):
        store.send(_CROSS_TENANT_SQL, [])


def tenant_of(owner: Any) -> int | None:
    """The tenant id of ``owner``: an organisation, anything with a ``tenant_id`` (a
    person, a row), a tenant's id, or None (a superuser with no organisation)."""
    if owner is None or isinstance(owner, int):
        return owner
    if isinstance(owner, Tenant):
        return int(owner.pk)
    return getattr(owner, "tenant_id", None)


def reads_act_for(user: Any) -> int | None:
    """The organisation a signed-in person's page and API reads act for
    (``TenantScopeMiddleware``): theirs; None for a superuser, whose reads cross
    tenants, for no one signed in, and when transactions do not act for a tenant."""
    if user is None or not user.is_authenticated or user.is_superuser or not enabled():
        return None
    return getattr(user, "tenant_id", None)


@contextlib.contextmanager
def atomic_for(owner: Any) -> Iterator[None]:
    """One transaction (``transaction.atomic``) acting for ``owner``'s tenant (see
    ``tenant_of``): a use-case that writes outside the command path. With no tenant
    (a superuser's own work) the block crosses tenants on the login role."""
    tenant_id = tenant_of(owner)
    with transaction.atomic():
        if tenant_id is None:
            yield
            return
        with acting_for(tenant_id):
            yield


def atomic_for_tenant_of(argument: str) -> Callable[[F], F]:
    """Decorator: the service runs in ``atomic_for`` the keyword argument ``argument``
    (the organisation, or the person or row whose organisation it is)."""

    def decorate(service: F) -> F:
        @functools.wraps(service)
        def run(*args: Any, **kwargs: Any) -> Any:
            with atomic_for(kwargs[argument]):
                return service(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate


def acting_now() -> int | None:
    """The tenant ``acting_for`` made the current block act for, as this process knows
    it (no round trip), or None: for a read that takes another path under the policy
    (the search's functions, migration 0043)."""
    if not enabled():
        return None
    return getattr(connections[DEFAULT_DB_ALIAS], "approvals_acting_for", None)


def acting_tenant() -> int | None:
    """The tenant the current transaction acts for, or None (for tests and checks: the
    application never needs to ask)."""
    db: Any = connections[DEFAULT_DB_ALIAS]
    with db.cursor() as cursor:
        cursor.execute(f"SELECT NULLIF(current_setting('{TENANT_SETTING}', true), '')")
        value = cursor.fetchone()[0]
    return int(value) if value is not None else None
