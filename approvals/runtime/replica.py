"""Reads of committed history from a streaming replica (``DATABASE_REPLICA_URL``).

Search, the audit export, analytics and verification read what was committed seconds
ago and tolerate that lag; they run their reads inside ``from_replica`` (a value) or
``streamed_from_replica`` (rows a response streams). Inside, ``ReplicaRouter`` sends the
ORM's reads to the replica and ``read_connection()`` is the connection the raw SQL of
those reads takes. Everything else (the inbox, the request page, every command and
every write) stays on the primary: the router sends nothing to the replica outside
those blocks, and every write to the primary.

The replica is a physical copy of the primary, so it holds the same roles and the same
row-level security policies: a block entered while the primary's transaction acts for
a tenant (``tenant_scope.acting_for``) acts for the same tenant on the replica, in a
read-only transaction of its own.

A replica further behind than ``APPROVALS_REPLICA_MAX_LAG_SECONDS`` (measured from
``pg_last_xact_replay_timestamp``, checked at most every
``APPROVALS_REPLICA_CHECK_SECONDS`` per process), or one that does not answer, is left
alone: the reads go to the primary until a later check finds it fit. A read that fails
on the replica part way is read again from the primary; a stream cut after its first
rows goes on from the primary where it stopped, when the primary's first rows are the
ones already sent (``streamed_from_replica``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import math
import time
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.utils import DatabaseError, InterfaceError, OperationalError

from .. import metrics
from . import tenant_scope

T = TypeVar("T")
P = ParamSpec("P")

REPLICA = "replica"
# How far behind the primary the replica is, in seconds: nothing when the last WAL
# received is replayed (an idle primary sends nothing new, and the replay time stays
# old), else the time since the last replayed commit; 0 on a server that is not a
# standby.
LAG_SQL = (
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0"
    " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
    " ELSE coalesce(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0)"
    " END"
)

_reading: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "approvals_replica_reading", default=None
)
# (when checked, on time.monotonic(); whether fit) for this process
_checked: dict[str, tuple[float, bool]] = {}


class ReplicaRouter:
    """The ORM's reads inside a replica block go to the replica; every other read, and
    every write, to the primary. Migrations run on the primary only (the replica
    replays them)."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        # never None: Django would then read a row's relations where the row was read
        return _reading.get() or DEFAULT_DB_ALIAS

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db != REPLICA


def configured() -> bool:
    return REPLICA in settings.DATABASES


def read_connection() -> Any:
    """The connection raw SQL of a read takes: the replica's inside a replica block."""
    return connections[_reading.get() or DEFAULT_DB_ALIAS]


def reading_alias() -> str:
    """Where the reads of the current block go: ``replica`` or ``default``."""
    return _reading.get() or DEFAULT_DB_ALIAS


def lag_seconds() -> float | None:
    """The replica's lag now (NaN when it does not answer); None without a replica."""
    if not configured():
        return None
    try:
        with connections[REPLICA].cursor() as cursor:
            cursor.execute(LAG_SQL)
            return float(cursor.fetchone()[0])
    except (DatabaseError, InterfaceError):
        connections[REPLICA].close()
        return math.nan


def _fit() -> bool:
    """Whether reads may go to the replica now (its lag checked every so often)."""
    now = time.monotonic()
    seen = _checked.get(REPLICA)
    if seen is not None and now - seen[0] < settings.APPROVALS_REPLICA_CHECK_SECONDS:
        return seen[1]
    lag = lag_seconds()
    fit = lag is not None and lag <= settings.APPROVALS_REPLICA_MAX_LAG_SECONDS
    _checked[REPLICA] = (now, fit)
    return fit


@contextlib.contextmanager
def _on_replica() -> Iterator[None]:
    """The block's reads on the replica, in a transaction acting for the tenant the
    primary's acts for (if any)."""
    tenant = tenant_scope.acting_now()
    with transaction.atomic(using=REPLICA):
        if tenant is not None:
            with connections[REPLICA].cursor() as cursor:
                cursor.execute(tenant_scope.ACT_SQL, [str(tenant)])
        token = _reading.set(REPLICA)
        try:
            yield
        finally:
            _reading.reset(token)


def _use_replica() -> bool:
    if not configured() or _reading.get() is not None:
        return False
    if _fit():
        return True
    metrics.REPLICA_FALLBACKS.labels("unfit").inc()
    return False


def from_replica(read: Callable[[], T]) -> T:
    """``read()`` on the replica when it is fit, else (or when the replica fails under
    it) on the primary. ``read`` must only read: it may run twice."""
    if not _use_replica():
        return read()
    try:
        with _on_replica():
            return read()
    except (OperationalError, InterfaceError):
        _failed()
    return read()


def replica_read(read: Callable[P, T]) -> Callable[P, T]:
    """Decorator: the function's reads on the replica, as ``from_replica`` runs them.
    It must only read, and return what it read (not a lazy query)."""

    @functools.wraps(read)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return from_replica(lambda: read(*args, **kwargs))

    return run


def streamed_from_replica(rows: Callable[[], Iterator[T]]) -> Iterator[T]:
    """The rows of ``rows()`` read on the replica when it is fit, else on the primary.
    A replica failing under the stream hands it to the primary: before the first row,
    the primary reads it all; after, the primary reads it again, and the stream goes on
    from where it stopped when the rows already sent are the primary's first rows too
    (``rows()`` must give its rows in a fixed order). When they are not (something
    committed since changed them), the stream ends with the replica's error: rows a
    client already has cannot be taken back."""
    if not _use_replica():
        yield from rows()
        return
    sent = 0
    digest = hashlib.sha256()
    try:
        with _on_replica():
            for row in rows():
                yield row
                sent += 1
                digest.update(_fingerprint(row))
        return
    except (OperationalError, InterfaceError) as exc:
        _failed()
        failure = exc
    if not sent:
        yield from rows()
        return
    again = rows()
    check = hashlib.sha256()
    for _ in range(sent):
        row = next(again, _END)
        if row is _END:
            raise failure
        check.update(_fingerprint(row))
    if check.digest() != digest.digest():
        raise failure
    metrics.REPLICA_FALLBACKS.labels("resumed").inc()
    yield from again


_END: Any = object()


def _fingerprint(row: object) -> bytes:
    return repr(row).encode()


def _failed() -> None:
    """A read failed on the replica (it went away, or its recovery cancelled the
    read): this read goes to the primary, and when the replica does not answer, the
    next ones too until a check finds it fit again."""
    metrics.REPLICA_FALLBACKS.labels("failed").inc()
    db = connections[REPLICA]
    try:
        with db.cursor() as cursor:
            cursor.execute("SELECT 1")
    except (OperationalError, InterfaceError):
        db.close()
        _checked[REPLICA] = (time.monotonic(), False)
