"""Plain SQL for the statements the command path repeats on every command.

Building a statement through the ORM costs about 1 ms of Python on the machines this
runs on, the same statement through the cursor about 0.2 ms, and a command issues a
dozen (bench/ has the figures). So the command path's writes and its small reads go
through here. Column names and parameter conversion still come from the models'
fields (``get_db_prep_save``), so a renamed column cannot drift from the model.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, TypeAlias

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, models, transaction
from django.db.models import Field, ForeignKey, Model
from psycopg import _queries as psycopg_queries
from psycopg.pq import TransactionStatus

IDLE = TransactionStatus.IDLE

# psycopg parses a statement's %s marks once and keeps the result, except for a
# statement with more than 50 parameters, which it takes for a one-off built by an ORM.
# The command path's statements come in a few shapes built once each (``_insert_sql``),
# and appending four events binds 56 parameters (a timer poller's group of workflows,
# some 600 in one INSERT): parsed anew on every decision, that cost more than binding
# them. The limit is psycopg's module setting.
PSYCOPG_CACHED_PARAMS = 1000
psycopg_queries.MAX_CACHED_STATEMENT_PARAMS = max(
    psycopg_queries.MAX_CACHED_STATEMENT_PARAMS, PSYCOPG_CACHED_PARAMS
)
# And of statements up to 4,096 characters: a command's writes sent as one statement
# (``gathered_writes``) run longer.
PSYCOPG_CACHED_LENGTH = 32_768
psycopg_queries.MAX_CACHED_STATEMENT_LENGTH = max(
    psycopg_queries.MAX_CACHED_STATEMENT_LENGTH, PSYCOPG_CACHED_LENGTH
)


@cache
def _fields(model: type[Model], names: tuple[str, ...]) -> tuple[str, list[Field[Any, Any]]]:
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    return meta.db_table, fields  # type: ignore[return-value]


@cache
def _defaulted(model: type[Model], names: tuple[str, ...]) -> list[Field[Any, Any]]:
    """The columns ``names`` leaves out: an INSERT through here fills them with the
    field's default ("" for text, None when nullable) as ``Model()`` would; a column
    with a database default is left to the database."""
    named = {model._meta.get_field(name) for name in names}
    return [
        f
        for f in model._meta.concrete_fields
        if f not in named and not f.primary_key and not f.has_db_default()
    ]


@cache
def _quote(name: str | None) -> str:
    """A table's or column's name quoted for the one database backend the app runs on
    (kept: reaching the connection through Django's proxy costs more than quoting)."""
    assert name is not None, "a concrete column"
    return connection.ops.quote_name(name)


Plan: TypeAlias = "tuple[tuple[Field[Any, Any], ...], tuple[tuple[type, Any] | None, ...]]"


@cache
def _plan(model: type[Model], names: tuple[str, ...], defaulted: bool) -> Plan:
    """The fields a write of ``names`` binds (with ``defaulted``, the columns it leaves
    out after them) and each one's ``_fast`` conversion, worked out once per shape: a
    lookup per value hashed a Django field each time, a hundred times a command."""
    _, named = _fields(model, names)
    fields = (*named, *(_defaulted(model, names) if defaulted else ()))
    return fields, tuple(_fast(f) for f in fields)


def _prep(plan: Plan, values: Sequence[Any], db: Any) -> list[Any]:
    """The values as the fields of ``plan`` save them. On PostgreSQL a value already of
    the type its field keeps takes the field's last step only (an int its typed
    wrapper, the others nothing), which is all the field's conversion would do to it;
    any other value goes through the field."""
    out: list[Any] = []
    for f, fast, v in zip(*plan, values, strict=True):
        if fast is not None:
            kind, wrap = fast
            if v is None and f.null:
                out.append(None)
                continue
            if type(v) is kind and (kind is not dt.datetime or getattr(v, "tzinfo", None)):
                out.append(wrap(v) if wrap is not None else v)
                continue
        out.append(f.get_db_prep_save(v, db))
    return out


@cache
def _fast(field: Field[Any, Any]) -> tuple[type, Any] | None:
    """The Python type whose values ``field`` stores as they are on PostgreSQL (an
    aware datetime, an int, a str, a bool, a uuid) and the wrapper Django's backend
    puts on them (psycopg's Int4 and kin for integer fields), or None: convert every
    value through the field."""
    target = field.target_field if isinstance(field, ForeignKey) else field
    for kinds, kind in _KEPT:
        if isinstance(target, kinds):
            wraps = getattr(connection.ops, "integerfield_type_map", {})
            return kind, wraps.get(target.get_internal_type()) if kind is int else None
    return None


_KEPT: tuple[tuple[Any, type], ...] = (
    (models.DateTimeField, dt.datetime),
    (models.IntegerField, int),  # AutoField and BigAutoField included
    ((models.CharField, models.TextField), str),
    (models.BooleanField, bool),
    (models.UUIDField, uuid.UUID),
)


@lru_cache(maxsize=512)
def _insert_sql(model: type[Model], names: tuple[str, ...], rows: int, ignore: bool) -> str:
    table, named = _fields(model, names)
    fields = [*named, *_defaulted(model, names)]
    columns = ", ".join(_quote(f.column) for f in fields)
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    sql = f"INSERT INTO {_quote(table)} ({columns}) VALUES {', '.join([one] * rows)}"
    if ignore:
        sql += " ON CONFLICT DO NOTHING"
    return sql


def insert(
    model: type[Model],
    names: tuple[str, ...],
    rows: Iterable[Sequence[Any]],
    *,
    on_conflict_ignore: bool = False,
    inbox_change: int | None = None,
) -> None:
    """INSERT the rows (values in the order of ``names``) in one statement; with
    ``on_conflict_ignore`` rows that would break a unique constraint are skipped.
    The statement's text is built once per shape. Inside ``gathered_writes`` the rows
    wait for the block's end, where each table's rows go in one statement.
    ``inbox_change`` (tasks, when ``inbox_counted``): each row's assignee gains one
    open task, counted in the same statement."""
    rows = list(rows)
    if not rows:
        return
    db = connections[DEFAULT_DB_ALIAS]  # the proxy's lookup, once rather than per value
    plan = _plan(model, names, True)
    defaulted = _defaulted(model, names)
    params: list[Any] = []
    for row in rows:
        params.extend(_prep(plan, [*row, *(f.get_default() for f in defaulted)], db))
    kind = on_conflict_ignore if inbox_change is None else _Counted(inbox_change, False)
    if not _held(db, (model, names, kind), len(rows), params):
        _run(db, _insert_sql(model, names, len(rows), on_conflict_ignore), params).close()


def _held(
    db: Any, key: tuple[type[Model], tuple[str, ...], Any], rows: int, params: list[Any]
) -> bool:
    """Inside ``gathered_writes``: add the rows to those held under ``key`` (table,
    columns, kind of write) and say so; outside, False: the caller sends them now."""
    gathered = getattr(db, "approvals_gathered", None)
    if gathered is None:
        return False
    waiting = gathered.setdefault(key, [0, []])
    waiting[0] += rows
    waiting[1].extend(params)
    return True


@contextlib.contextmanager
def gathered_writes() -> Iterator[None]:
    """Hold back the ``insert`` and ``update`` calls of the block and send them at its
    end: one statement per table and column set (the timer poller's group of workflows
    sends one INSERT of events for all, one UPDATE of their rows), and on PostgreSQL
    all of them as one statement. A command's half-dozen writes (events, workflow,
    tasks, timers, mails) then cost the driver and the server one statement's work
    instead of six. Nothing inside may read, update or delete a row it inserted or
    updated through here (foreign keys are checked at COMMIT, as Django declares them
    on PostgreSQL); statements sent through ``execute`` go at once, before these. If
    the block raises, the rows are dropped with it."""
    db: Any = connections[DEFAULT_DB_ALIAS]
    if getattr(db, "approvals_gathered", None) is not None:
        yield  # an outer block sends them
        return
    gathered: dict[tuple[type[Model], tuple[str, ...], Any], list[Any]] = {}
    db.approvals_gathered = gathered
    try:
        yield
    finally:
        db.approvals_gathered = None
    statements: list[tuple[str, list[Any]]] = []
    counted: dict[int, list[int]] = {}  # a change in open tasks -> the clauses giving it
    for (model, names, kind), (count, params) in gathered.items():
        if isinstance(kind, _Counted):
            counted.setdefault(kind.change, []).append(len(statements))
            sql = names[0] if kind.raw else _insert_sql(model, names, count, False)
            statements.append((f"{sql} RETURNING assignee_id", params))
        elif kind is _UPDATE:
            statements.append((_update_many_sql(model, names, count), params))
        else:
            statements.append((_insert_sql(model, names, count, kind), params))
    if counted:
        statements.append((_inbox_counts_sql(counted), []))
    if len(statements) > 1:
        # One statement: each write but the last in a WITH clause of its own. PostgreSQL
        # runs every data-modifying WITH clause; none of them sees another's rows,
        # which none needs (see above), but the inbox's counts, which read what the
        # task writes return.
        sql = "WITH " + ", ".join(f"w{i} AS ({s})" for i, (s, _) in enumerate(statements[:-1]))
        params = [p for _, ps in statements for p in ps]
        statements = [(f"{sql} {statements[-1][0]}", params)]
    for sql, params in statements:
        _run(db, sql, params).close()


# --- the inbox's counters, counted by the command that writes the tasks ----------------

# Set with the tenant by a command's own transaction (``pipelined(count_inbox=True)``,
# tenant_scope.acting_for): the task triggers (approvals/sql/triggers/inbox_version.sql)
# skip a transaction that counts its own task writes.
INBOX_COUNTED_SETTING = "approvals.inbox_counted"
INBOX_COUNTED_SQL = f"set_config('{INBOX_COUNTED_SETTING}', 'on', true)"


@dataclass(frozen=True, slots=True)
class _Counted:
    """A gathered task write whose assignees' open tasks change by ``change`` each;
    ``raw``: a DELETE or UPDATE written by the caller (else the gathered INSERT)."""

    change: int
    raw: bool


def inbox_counted() -> bool:
    """Whether this transaction counts its own task writes: a command's transaction
    whose tenant was set with ``approvals.inbox_counted`` (then every task write goes
    through ``task_write`` or ``insert(..., inbox_change=1)`` inside ``gathered_writes``)."""
    db: Any = connections[DEFAULT_DB_ALIAS]
    return getattr(db, "approvals_inbox_counted", None) == "on" and (
        getattr(db, "approvals_gathered", None) is not None
    )


def task_write(model: type[Model], sql: str, params: Sequence[Any], change: int) -> None:
    """A DELETE (``change`` -1) or UPDATE (0) of tasks, held for the gathered statement,
    where each row it touches changes its assignee's open tasks by ``change`` (see
    ``inbox_counted``). Each call is a clause of its own."""
    db: Any = connections[DEFAULT_DB_ALIAS]
    gathered = db.approvals_gathered
    gathered[(model, (sql, str(len(gathered))), _Counted(change, True))] = [1, list(params)]


def _inbox_counts_sql(counted: dict[int, list[int]]) -> str:
    """Each assignee's version bumped and open tasks changed by what the task clauses
    returned: the deletes read first (so a task deleted and inserted again in the
    statement is gone before its key comes back), people in id order (as the triggers'
    flush at commit, so two commands lock alike)."""
    parts = " UNION ALL ".join(
        f"SELECT assignee_id, {change} FROM w{i}"
        for change in sorted(counted)
        for i in counted[change]
    )
    return (
        "INSERT INTO approvals_inboxversion AS v (person_id, version, open_tasks)"
        f" SELECT p, 1, sum(d) FROM ({parts}) c (p, d) GROUP BY p ORDER BY p"
        " ON CONFLICT (person_id) DO UPDATE"
        " SET version = v.version + 1, open_tasks = v.open_tasks + excluded.open_tasks"
    )


def update(model: type[Model], pk: Any, values: dict[str, Any]) -> None:
    """UPDATE one row by primary key. Inside ``gathered_writes`` (on PostgreSQL) the
    row waits for the block's end, where the rows of each column set go in one UPDATE."""
    names = tuple(values)
    pk_field = model._meta.pk
    assert pk_field is not None
    db = connections[DEFAULT_DB_ALIAS]
    params = [
        *_prep(_plan(model, names, False), list(values.values()), db),
        pk_field.get_db_prep_value(pk, db),
    ]
    if not _held(db, (model, names, _UPDATE), 1, params):
        _run(db, _update_sql(model, names), params).close()


_UPDATE = "update"  # a gathered UPDATE's key (an INSERT's says whether it ignores conflicts)


@lru_cache(maxsize=64)
def _update_many_sql(model: type[Model], names: tuple[str, ...], rows: int) -> str:
    """One UPDATE of ``rows`` rows by primary key, each with its own values (PostgreSQL:
    ``UPDATE ... FROM (VALUES ...)``, the values cast to their columns' types)."""
    table, fields = _fields(model, names)
    pk_field = model._meta.pk
    assert pk_field is not None
    typed = [*fields, pk_field]
    one = "(" + ", ".join(f"CAST(%s AS {f.db_type(connection)})" for f in typed) + ")"
    labels = ", ".join(f"c{i}" for i in range(len(typed)))
    assignments = ", ".join(f"{_quote(f.column)} = v.c{i}" for i, f in enumerate(fields))
    return (
        f"UPDATE {_quote(table)} AS t SET {assignments}"
        f" FROM (VALUES {', '.join([one] * rows)}) AS v ({labels})"
        f" WHERE t.{_quote(pk_field.column)} = v.c{len(fields)}"
    )


@lru_cache(maxsize=128)
def _update_sql(model: type[Model], names: tuple[str, ...]) -> str:
    table, fields = _fields(model, names)
    pk_field = model._meta.pk
    assert pk_field is not None
    assignments = ", ".join(f"{_quote(f.column)} = %s" for f in fields)
    return f"UPDATE {_quote(table)} SET {assignments} WHERE {_quote(pk_field.column)} = %s"


def execute(sql: str, params: Sequence[Any]) -> int:
    """Run a statement written against the tables' real names; returns rowcount."""
    cursor = _run(connections[DEFAULT_DB_ALIAS], sql, params)
    try:
        return int(cursor.rowcount)
    finally:
        cursor.close()


def send(sql: str, params: Sequence[Any]) -> None:
    """Run a statement whose answer nobody reads: inside ``pipelined`` it travels with
    the next round trip instead of taking one of its own."""
    _run(connections[DEFAULT_DB_ALIAS], sql, params).close()


def fetch(sql: str, params: Sequence[Any], *, prepare: bool = False) -> list[tuple[Any, ...]]:
    """The rows of one SELECT. ``prepare``: bound on the server and prepared as the
    command path's statements are (``_prepared``), for a read that runs on every
    request in a few fixed shapes, so the server stops parsing and planning it."""
    db = connections[DEFAULT_DB_ALIAS]
    raw = db.connection
    with _prepared(raw) if prepare and raw is not None else contextlib.nullcontext():
        cursor = _run(db, sql, params)
    try:
        with db.wrap_database_errors:
            return list(cursor.fetchall())
    finally:
        cursor.close()


def _run(db: Any, sql: str, params: Sequence[Any] | None) -> Any:
    """Execute one statement of the command path; returns the cursor (close it).

    When nothing watches the connection's statements (Django logs none: DEBUG is off
    and no test captures them, and no execute wrapper is installed), the statement
    goes to psycopg's cursor directly: Django's cursor wrapper costs more Python per
    statement than psycopg's execute itself, a dozen times per command. What Django's
    cursor does first is done here too: the connection's health check when one is due
    (``CONN_HEALTH_CHECKS``), and a connection is opened when there is none. Errors are
    still raised as Django's (``wrap_database_errors``), so callers catch
    ``django.db.IntegrityError`` either way.
    """
    if not (db.queries_logged or db.execute_wrappers):
        db.close_if_health_check_failed()
        raw = db.connection
        if raw is not None:
            db.validate_no_broken_transaction()
            cursor = raw.cursor()
            with db.wrap_database_errors:
                cursor.execute(sql, params)
            return cursor
    cursor = db.cursor()
    cursor.execute(sql, params)
    return cursor


def param(model: type[Model], name: str, value: Any) -> Any:
    """``value`` as the database stores the field ``name``."""
    field = model._meta.get_field(name)
    return field.get_db_prep_value(value, connections[DEFAULT_DB_ALIAS])  # type: ignore[union-attr]


def table(model: type[Model]) -> str:
    return _quote(model._meta.db_table)


def uuid_param(model: type[Model], value: Any) -> Any:
    """A primary-key value as the database stores it."""
    pk_field = model._meta.pk
    assert pk_field is not None
    return pk_field.get_db_prep_value(value, connections[DEFAULT_DB_ALIAS])


def columns(model: type[Model], alias: str, names: tuple[str, ...] | None = None) -> str:
    """The model's columns (or those of the fields ``names``), in order, for a SELECT
    read by ``instance``."""
    return ", ".join(f"{alias}.{_quote(f.column)}" for f in _concrete(model, names))


@cache
def _concrete(model: type[Model], names: tuple[str, ...] | None) -> list[Field[Any, Any]]:
    if names is None:
        return list(model._meta.concrete_fields)
    return [model._meta.get_field(name) for name in names]  # type: ignore[misc]


@cache
def _converters(
    model: type[Model], names: tuple[str, ...] | None
) -> tuple[tuple[str, ...], list[tuple[Any, list[Any]]]]:
    fields = _concrete(model, names)
    cols = [f.get_col(model._meta.db_table) for f in fields]
    converters = [
        (c, connection.ops.get_db_converters(c) + c.get_db_converters(connection)) for c in cols
    ]
    return tuple(f.attname for f in fields), converters


def values(
    model: type[Model], row: Sequence[Any], names: tuple[str, ...] | None = None
) -> Sequence[Any]:
    """A row of ``columns(model, ..., names)`` converted as the ORM converts it (JSON),
    without building an instance."""
    return converter(model, names)(row)


@cache
def converter(
    model: type[Model], names: tuple[str, ...] | None = None
) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """``values`` for one shape of row, looked up once: the row itself when no column
    needs converting (PostgreSQL, for most columns)."""
    _, converters = _converters(model, names)
    if not any(convert for _, convert in converters):
        return _as_is

    def convert_row(row: Sequence[Any]) -> list[Any]:
        db = connections[DEFAULT_DB_ALIAS]
        out = []
        for value, (col, convert) in zip(row, converters, strict=True):
            for fn in convert:
                value = fn(value, col, db)
            out.append(value)
        return out

    return convert_row


def _as_is(row: Sequence[Any]) -> Sequence[Any]:
    return row


def instance(model: type[Model], row: Sequence[Any], names: tuple[str, ...] | None = None) -> Any:
    """A model instance from a row of ``columns(model, ..., names)``, converted as the
    ORM converts (JSON). With ``names``, the other fields
    are deferred, as ``QuerySet.only`` leaves them."""
    attnames, _ = _converters(model, names)
    return model.from_db(DEFAULT_DB_ALIAS, attnames, values(model, row, names))


def json_value(value: Any) -> Any:
    """A JSON column as read through the cursor (text where psycopg's loader is not
    Django's)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


# --- one transaction in two round trips -------------------------------------------------


def fetch_many(queries: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
    """Run the SELECTs and return their rows, in order. Inside ``pipelined`` they all
    travel to the server together and come back together: one round trip."""
    db = connections[DEFAULT_DB_ALIAS]
    cursors = []
    try:
        for sql, params in queries:
            cursors.append(_run(db, sql, params))
        with db.wrap_database_errors:
            # One sync asks for every answer at once; fetching cursor by cursor sends
            # a flush request for each cursor whose answer has not arrived yet.
            if (pipeline := getattr(db, "approvals_pipeline", None)) is not None:
                pipeline.sync()
            return [list(cursor.fetchall()) for cursor in cursors]
    finally:
        for cursor in cursors:
            cursor.close()


@contextlib.contextmanager
def pipelined(*, count_inbox: bool = False) -> Iterator[None]:
    """A transaction whose statements are sent without waiting for each answer.

    Outside any transaction, the block runs in psycopg's pipeline mode:
    BEGIN and the statements issued before the first read go to the server in one
    round trip, and the writes after it go with COMMIT in a second. Django's own
    ``atomic`` would cost two more (psycopg waits for BEGIN in pipeline mode, and
    switching autocommit waits for the server), so this block sends BEGIN and COMMIT
    itself and tells Django it is inside an atomic block: ``transaction.on_commit``
    hooks run after COMMIT and are dropped on ROLLBACK, as under ``atomic``.

    Inside the block a failed statement is reported when its result is read or at
    COMMIT, and it aborts the transaction: nothing inside may catch a database error
    and carry on (no savepoint recovery). Already inside a transaction (tests, or a
    use-case that groups several commands, such as a deactivation handing on every
    task) this is ``atomic()``.

    ``count_inbox``: the block is one command whose task writes all go through one
    ``gathered_writes``; outside any transaction, its tenant's setting then says
    so (``tenant_scope.acting_for``) and the gathered statement counts them
    (``inbox_counted``), in place of the task triggers.
    """
    # The connection itself, not Django's proxy: every attribute read through the proxy
    # costs a thread-local lookup, and the block reads and sets a dozen.
    db: Any = connections[DEFAULT_DB_ALIAS]
    db.close_if_health_check_failed()  # before the pipeline, where SELECT 1 would not wait
    db.ensure_connection()
    raw = db.connection
    assert raw is not None
    if db.in_atomic_block:
        with transaction.atomic(), _prepared(raw):
            yield
        return
    assert raw.autocommit, "outside a transaction, autocommit is on"
    committed = False
    try:
        with db.wrap_database_errors, raw.pipeline() as pipeline, _prepared(raw):
            db.approvals_pipeline = pipeline
            db.approvals_inbox_counted = "asked" if count_inbox else None
            _enter_atomic(db)
            _run(db, "BEGIN", None).close()
            try:
                yield
            except BaseException:
                # A refusal: ROLLBACK travels with the pipeline's last sync. (After a
                # failed statement the pipeline takes nothing more: rolled back below.)
                with contextlib.suppress(Exception):
                    _run(db, "ROLLBACK", None).close()
                raise
            if db.needs_rollback:
                raise transaction.TransactionManagementError(
                    "a statement failed inside a pipelined transaction"
                )
            _run(db, "COMMIT", None).close()
        committed = True  # the pipeline's end waited for COMMIT's answer
    except BaseException:
        _rollback(db, raw)
        raise
    finally:
        db.approvals_pipeline = None
        db.approvals_inbox_counted = None
        hooks = db.run_on_commit
        _leave_atomic(db)
    if committed:
        db.run_on_commit = hooks
        db.run_and_clear_commit_hooks()


@contextlib.contextmanager
def _prepared(raw: Any) -> Iterator[None]:
    """Statements of the block bound on the server, and prepared once one has run
    APPROVALS_DB_PREPARE_THRESHOLD times on the connection: the command path repeats a
    dozen statements on every command, and parsing and planning each anew cost the
    server more than running them. Elsewhere Django's client-side binding stays (it
    never prepares). None turns preparing off, for a pooler that cannot keep prepared
    statements (PgBouncer in transaction mode before 1.21)."""
    threshold = settings.APPROVALS_DB_PREPARE_THRESHOLD
    if threshold is None:
        yield
        return
    from django.db.backends.postgresql.base import ServerBindingCursor

    previous = raw.cursor_factory
    raw.cursor_factory = ServerBindingCursor
    raw.prepare_threshold = threshold
    try:
        yield
    finally:
        raw.cursor_factory = previous


def _enter_atomic(db: Any) -> None:
    db.commit_on_exit = True
    db.needs_rollback = False
    db.autocommit = False  # Django's view; psycopg's stays on (we send BEGIN)
    db.in_atomic_block = True


def _leave_atomic(db: Any) -> None:
    if db.closed_in_transaction:
        # The connection was closed inside the block (it broke, and the ROLLBACK could
        # not be sent): drop it, as Django's atomic does on leaving its outermost block,
        # or every later close() would skip it and every command would meet it again.
        db.connection = None
    db.in_atomic_block = False
    db.autocommit = True
    db.needs_rollback = False
    db.savepoint_ids = []
    db.atomic_blocks = []
    db.run_on_commit = []


def _rollback(db: Any, raw: Any) -> None:
    try:
        if raw.info.transaction_status != IDLE:
            raw.execute("ROLLBACK")
    except Exception:  # the connection is unusable: Django reconnects next time
        db.close()
