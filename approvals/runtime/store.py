"""Plain SQL for the statements the command path repeats on every command.

Building a statement through the ORM costs about 1 ms of Python on the machines this
runs on, the same statement through the cursor about 0.2 ms, and a command issues a
dozen (bench/ has the figures). So the command path's writes and its small reads go
through here. Column names and parameter conversion still come from the models'
fields (``get_db_prep_save``), so the same code serves PostgreSQL and SQLite, and a
renamed column cannot drift from the model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Field, Model


@cache
def _fields(model: type[Model], names: tuple[str, ...]) -> tuple[str, list[Field[Any, Any]]]:
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    return meta.db_table, fields  # type: ignore[return-value]


def _quote(name: str | None) -> str:
    assert name is not None, "a concrete column"
    return connection.ops.quote_name(name)


def _prep(fields: Sequence[Field[Any, Any]], values: Sequence[Any]) -> list[Any]:
    return [f.get_db_prep_save(v, connection) for f, v in zip(fields, values, strict=True)]


def insert(
    model: type[Model],
    names: tuple[str, ...],
    rows: Iterable[Sequence[Any]],
    *,
    on_conflict_ignore: bool = False,
) -> None:
    """INSERT the rows (values in the order of ``names``) in one statement; with
    ``on_conflict_ignore`` rows that would break a unique constraint are skipped."""
    rows = list(rows)
    if not rows:
        return
    table, fields = _fields(model, names)
    columns = ", ".join(_quote(f.column) for f in fields)
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    params: list[Any] = []
    for row in rows:
        params.extend(_prep(fields, row))
    sql = f"INSERT INTO {_quote(table)} ({columns}) VALUES {', '.join([one] * len(rows))}"
    if on_conflict_ignore:
        sql += " ON CONFLICT DO NOTHING"  # PostgreSQL and SQLite 3.24+
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def update(model: type[Model], pk: Any, values: dict[str, Any]) -> None:
    """UPDATE one row by primary key."""
    names = tuple(values)
    table, fields = _fields(model, names)
    pk_field = model._meta.pk
    assert pk_field is not None
    assignments = ", ".join(f"{_quote(f.column)} = %s" for f in fields)
    sql = f"UPDATE {_quote(table)} SET {assignments} WHERE {_quote(pk_field.column)} = %s"
    params = [*_prep(fields, list(values.values())), pk_field.get_db_prep_value(pk, connection)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def execute(sql: str, params: Sequence[Any]) -> int:
    """Run a statement written against the tables' real names; returns rowcount."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def fetch(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def param(model: type[Model], name: str, value: Any) -> Any:
    """``value`` as the database stores the field ``name`` (datetimes on SQLite)."""
    return model._meta.get_field(name).get_db_prep_value(value, connection)  # type: ignore[union-attr]


def table(model: type[Model]) -> str:
    return _quote(model._meta.db_table)


def uuid_param(model: type[Model], value: Any) -> Any:
    """A primary-key value as the database stores it (a uuid, or hex on SQLite)."""
    pk_field = model._meta.pk
    assert pk_field is not None
    return pk_field.get_db_prep_value(value, connection)


def json_value(value: Any) -> Any:
    """A JSON column as read through the cursor: text on both backends here."""
    return json.loads(value) if isinstance(value, str | bytes) else value
