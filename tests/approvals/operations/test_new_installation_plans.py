"""A new installation plans its first requests as it will plan them later: migrated from
nothing, its empty tables are never analyzed (migration 0191), so the key lookup
PostgreSQL runs for every foreign key at commit takes the primary key, where statistics
taken while the table was empty made it a sequential scan over every workflow, a dozen
times a decision, for as long as a connection lived. An installation with history is left
as it is, and the job ``refresh-statistics`` analyzes a never-analyzed table once it holds
a few hundred rows."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from approvals.runtime.statistics import FLOOR, statistics_stale
from tests.approvals.helpers import start_expense

ROOT = Path(__file__).resolve().parents[3]
MIGRATION = importlib.import_module("approvals.migrations.0191_new_installation_statistics")
# What PostgreSQL's foreign-key trigger asks at commit for each row that names a
# workflow (ri_triggers.c), planned once per connection and kept.
KEY_LOOKUP = (
    'SELECT 1 FROM ONLY "public"."approvals_workflow" x'
    ' WHERE "id" OPERATOR(pg_catalog.=) $1 FOR KEY SHARE OF x'
)
COMMAND_TABLES = (
    "approvals_workflow",
    "approvals_pendingtask",
    "approvals_stepvisit",
    "approvals_timer",
    "approvals_workflowparticipant",
    "notifications_mailmessage",
)


def _url(name: str) -> str:
    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"


@pytest.fixture
def migrated_from_nothing() -> Iterator[str]:
    name = f"{settings.DATABASES['default']['NAME']}_new_installation"
    admin = _url("postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        env = {
            **os.environ,
            "DATABASE_URL": _url(name),
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
        done = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        yield _url(name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _generic_plan(conn: psycopg.Connection[Any]) -> str:
    conn.execute("SET plan_cache_mode = force_generic_plan")  # as the trigger keeps it
    conn.execute(f"PREPARE key_lookup(uuid) AS {KEY_LOOKUP}")
    try:
        rows = conn.execute(
            "EXPLAIN (COSTS OFF) EXECUTE key_lookup('00000000-0000-0000-0000-000000000000')"
        ).fetchall()
        return "\n".join(str(r[0]) for r in rows)
    finally:
        conn.execute("DEALLOCATE key_lookup")


@pytest.mark.django_db
def test_a_new_installation_looks_workflows_up_by_their_key_from_the_first_row(
    migrated_from_nothing: str,
) -> None:
    with psycopg.connect(migrated_from_nothing, autocommit=True) as conn:
        never: dict[str, float] = dict(
            conn.execute(
                "SELECT relname, reltuples FROM pg_class WHERE relname = ANY(%s)",
                [list(COMMAND_TABLES)],
            ).fetchall()
        )
        assert never == {t: -1 for t in COMMAND_TABLES}
        assert "approvals_workflow_pkey" in _generic_plan(conn)

        # Why: the same table analyzed while empty, as migration 0041 leaves it.
        conn.execute("ANALYZE approvals_workflow")
        assert "Seq Scan on approvals_workflow" in _generic_plan(conn)


def _reltuples(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_an_installation_with_history_is_left_as_it_is(acme: Any, api: Any) -> None:
    assert start_expense(api("alice"), 4_500_000).status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE approvals_pendingtask")
        cursor.execute("SELECT count(*) FROM approvals_workflow")
        workflows = cursor.fetchone()[0]
        before = _reltuples("approvals_pendingtask")

        cursor.execute(MIGRATION.SQL)

        cursor.execute("SELECT count(*) FROM approvals_workflow")
        assert cursor.fetchone()[0] == workflows == 1
    assert _reltuples("approvals_pendingtask") == before >= 0


@pytest.mark.django_db(transaction=True)
def test_a_never_analyzed_table_is_analyzed_once_it_holds_a_few_hundred_rows(
    acme: Any, api: Any
) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET approvals.allow_truncate = on")  # a throw-away database
        cursor.execute("TRUNCATE approvals_workflow CASCADE")  # as migration 0191 leaves it
        cursor.execute("RESET approvals.allow_truncate")
    assert _reltuples("approvals_workflow") == -1
    client = api("alice")
    for _ in range(2 * FLOOR + 10):
        assert start_expense(client, 4_500_000).status_code == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")

    assert "approvals_workflow" in statistics_stale()
