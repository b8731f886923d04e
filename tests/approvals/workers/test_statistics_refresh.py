"""A young database's statistics follow its rows: the tables migration 0041 analyzed
while empty are analyzed again by the job once they hold more than twice what their
statistics say, and a table whose statistics are current is left alone."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from approvals.runtime.statistics import FLOOR, statistics_refresh, statistics_stale
from approvals.workers.jobs import PERIODIC_JOBS
from tests.approvals.helpers import start_expense

pytestmark = pytest.mark.django_db(transaction=True)


def _reltuples(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return float(cursor.fetchone()[0])


def _flushed() -> None:
    """This backend's counts of rows written, in the statistics views now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")


def test_tables_analyzed_while_empty_are_analyzed_again_once_outgrown(acme: Any, api: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE approvals_workflow")  # as migration 0041 left it: empty
    assert _reltuples("approvals_workflow") < FLOOR
    client = api("alice")
    for _ in range(2 * FLOOR + 10):
        assert start_expense(client, 4_500_000).status_code == 201
    _flushed()

    assert "approvals_workflow" in statistics_stale()
    analyzed = statistics_refresh()
    _flushed()

    assert "approvals_workflow" in analyzed
    assert _reltuples("approvals_workflow") >= 2 * FLOOR
    # current now: the next run leaves it alone
    assert "approvals_workflow" not in statistics_refresh()


def test_a_small_table_is_left_to_itself(acme: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE approvals_user")
    _flushed()

    assert "approvals_user" not in statistics_stale()  # a few people: under FLOOR


def test_the_job_runs_every_minute() -> None:
    (job,) = [j for j in PERIODIC_JOBS if j.name == "refresh-statistics"]
    assert (job.task, job.default_seconds) == ("approvals.refresh_statistics", 60)
