"""approvals/runtime/loaders.py: PostgreSQL timestamps read by psycopg's C parser give
what Django's own loader gives, value for value, zone object for zone object."""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader

from approvals.runtime.loaders import TIMESTAMPTZ_OID, UtcTimestamptzLoader

pytestmark = pytest.mark.django_db

LITERALS = [
    "2026-12-01 09:30:00+00",
    "2026-12-01 09:30:00.000001+00",
    "2026-12-01 09:30:00.999999+05:30",  # another zone, read in the session's (UTC)
    "1970-01-01 00:00:00+00",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "2026-03-29 01:30:00+01",  # a DST change elsewhere is no matter in UTC
]
OUT_OF_RANGE = ["infinity", "-infinity", "10000-01-01 00:00:00+00", "0001-01-01 00:00:00 BC"]


def _read(literal: str, *, ours: bool) -> dt.datetime:
    connection.ensure_connection()
    cursor = connection.connection.cursor()
    if not ours:  # the loader Django registers, on this cursor alone
        register_tzloader(dt.UTC, cursor)
    cursor.execute("SELECT %s::timestamptz", [literal])
    (value,) = cursor.fetchone()
    return value


def test_every_new_connection_reads_timestamps_with_the_c_parser():
    connection.ensure_connection()
    loader = connection.connection.adapters.get_loader(TIMESTAMPTZ_OID, psycopg.pq.Format.TEXT)
    assert loader is UtcTimestamptzLoader
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        (now,) = cursor.fetchone()
    assert now.tzinfo is dt.UTC


@pytest.mark.parametrize("literal", LITERALS)
def test_a_timestamp_reads_as_djangos_loader_reads_it(literal):
    ours, django = _read(literal, ours=True), _read(literal, ours=False)
    assert ours == django
    assert ours.tzinfo is django.tzinfo is dt.UTC
    assert ours.isoformat() == django.isoformat()


@pytest.mark.parametrize("literal", OUT_OF_RANGE)
def test_a_timestamp_python_cannot_hold_is_refused_as_djangos_loader_refuses_it(literal):
    with pytest.raises(psycopg.DataError):
        _read(literal, ours=False)
    with pytest.raises(psycopg.DataError):
        _read(literal, ours=True)


def test_a_session_in_another_zone_reads_as_djangos_loader_reads_it():
    # Django keeps the session in UTC; were it not, both loaders attach UTC alike.
    connection.ensure_connection()
    raw = connection.connection
    raw.execute("SET TIME ZONE 'Asia/Kolkata'")
    try:
        for literal in LITERALS[:3]:
            ours, django = _read(literal, ours=True), _read(literal, ours=False)
            assert ours == django
            assert ours.tzinfo is django.tzinfo
    finally:
        raw.execute("SET TIME ZONE 'UTC'")
