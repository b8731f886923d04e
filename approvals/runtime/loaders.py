"""How PostgreSQL's timestamps are read: psycopg's C parser, not its Python one.

Django registers on every psycopg connection a loader for ``timestamptz`` that
subclasses psycopg's pure-Python loader (to attach ``connection.timezone``), so every
timestamp read anywhere in the app, two per inbox row and several per command, is
parsed in Python: about 8 us a value against 0.5 us for psycopg's C loader on the
machines this runs on. The C loader cannot be subclassed, so
``UtcTimestamptzLoader`` holds one and hands it each value; it keeps the ``timezone``
attribute Django's ``create_cursor`` compares before registering a loader of its own.

The C loader gives a datetime in the session's ``TimeZone``, which Django sets to the
connection's time zone (``UTC`` with ``USE_TZ``). A value in any other zone is given
that time zone as Django's loader gives it (``replace(tzinfo=...)``), so what is read
is the same either way; only the speed differs. Without psycopg's C module (a pure
Python install) nothing is registered.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from psycopg import adapt, postgres
from psycopg.pq import Format

try:
    from psycopg_binary._psycopg import (  # type: ignore[attr-defined]
        TimestamptzLoader as _CTimestamptzLoader,
    )
except ImportError:  # pragma: no cover - psycopg without its C module
    _CTimestamptzLoader = None

TIMESTAMPTZ_OID = postgres.types["timestamptz"].oid


class UtcTimestamptzLoader(adapt.Loader):
    """``timestamptz`` text as an aware datetime in ``timezone``, parsed in C."""

    timezone: dt.tzinfo | None = dt.UTC

    def __init__(self, oid: int, context: Any = None) -> None:
        super().__init__(oid, context)
        assert _CTimestamptzLoader is not None
        self._parse = _CTimestamptzLoader(oid, context).load

    def load(self, data: Any) -> dt.datetime:
        value: dt.datetime = self._parse(data)
        if value.tzinfo is not self.timezone:
            value = value.replace(tzinfo=self.timezone)
        return value


def fast_timestamps(sender: Any, connection: Any, **_: Any) -> None:
    """On each new PostgreSQL connection (Django's ``connection_created``): read
    timestamps with the C parser when Django's loader would attach UTC."""
    if _CTimestamptzLoader is None:
        return
    raw = connection.connection
    current = raw.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
    if getattr(current, "timezone", None) is not dt.UTC or connection.timezone is not dt.UTC:
        return  # not Django's UTC loader: leave whatever is there
    raw.adapters.register_loader("timestamptz", UtcTimestamptzLoader)
