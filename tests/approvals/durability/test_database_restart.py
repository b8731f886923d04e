"""The worker and the scheduler loop recover from a PostgreSQL restart by themselves,
and nothing is half-written. The restart is real (``pg_ctlcluster ... restart``), so
it cuts every connection to the server; set DURABILITY_SKIP_PG_RESTART=1 to skip it
on a machine whose server other work shares.

For the same reason it runs alone: under pytest-xdist with more than one worker the
others' tests would lose their connections mid-test, so it is skipped there and
``make test`` runs it first, by itself."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from django.db import connection
from django.db.utils import DatabaseError, InterfaceError

from approvals.models import WorkflowEvent

from .activities import DELAY_KEY, effects
from .conftest import Processes, wait_until
from .support import action_template, assert_histories_intact, publish, start, statuses

WORKFLOWS = 20
STEPS = 2
OUTAGE = 3.0  # seconds; several ticks of the scheduler loop

pytestmark = pytest.mark.topology


def cluster_version() -> str:
    return os.environ.get("DURABILITY_PG_VERSION") or sorted(os.listdir("/etc/postgresql"))[-1]


def pg_ctlcluster(action: str) -> None:
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", cluster_version(), "main", action],
        check=True,
        timeout=120,
        capture_output=True,
    )


def restart_postgresql() -> None:
    """A restart that keeps the server down for OUTAGE seconds, so that every process
    meets it (a plain ``restart`` can fall between two ticks of the scheduler)."""
    pg_ctlcluster("stop")
    try:
        time.sleep(OUTAGE)
    finally:
        pg_ctlcluster("start")


def database_answers() -> bool:
    from django.conf import settings

    db = settings.DATABASES["default"]
    ready = subprocess.run(
        ["pg_isready", "-h", db.get("HOST") or "127.0.0.1", "-p", str(db.get("PORT") or 5432)],
        capture_output=True,
        timeout=10,
    )
    return ready.returncode == 0


def tolerant(check: Any) -> Any:
    """``check`` that reads the database; False while the server is down."""

    def run() -> Any:
        try:
            return check()
        except (DatabaseError, InterfaceError):
            connection.close()
            return False

    return run


@pytest.mark.skipif(
    os.environ.get("DURABILITY_SKIP_PG_RESTART") == "1", reason="DURABILITY_SKIP_PG_RESTART=1"
)
@pytest.mark.skipif(
    int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1) > 1,
    reason="restarts the PostgreSQL server the other xdist workers use: run it alone"
    " (make test runs it first, by itself)",
)
@pytest.mark.skipif(not Path("/etc/postgresql").is_dir(), reason="no local PostgreSQL cluster")
@pytest.mark.django_db(transaction=True)
def test_worker_and_scheduler_recover_from_a_postgresql_restart(
    acme: Any, broker: redis.Redis, effects_table: None, processes: Processes, queue: str
) -> None:
    # given a worker and the scheduler loop busy with 20 workflows of two activities
    # and a one-second wait between them
    publish(acme, action_template("pg-restart", queue, steps=STEPS, timeout="PT3S", wait="PT1S"))
    broker.set(DELAY_KEY, 0.1)
    worker = processes.worker(queue)
    scheduler = processes.scheduler(interval=0.5, redispatch_after=3.0)
    ids = start("pg-restart", WORKFLOWS)
    wait_until(
        lambda: WorkflowEvent.objects.filter(type="ActivitySucceeded").count() >= WORKFLOWS // 2,
        timeout=120,
        interval=0.2,
        what="the work to get going",
    )

    # when PostgreSQL restarts under them
    done_before = WorkflowEvent.objects.filter(type="ActivitySucceeded").count()
    restart_postgresql()
    connection.close()
    wait_until(database_answers, timeout=60, interval=0.2, what="PostgreSQL to answer")
    restarted_at = time.monotonic()

    # then, untouched, they finish every workflow
    wait_until(
        tolerant(lambda: statuses(ids).get("APPROVED", 0) == WORKFLOWS),
        timeout=180,
        interval=0.5,
        what="every workflow to complete after the restart",
    )
    print(
        f"{done_before} of {WORKFLOWS * STEPS} activities done at the restart; all complete"
        f" {time.monotonic() - restarted_at:.1f}s after it"
    )
    assert worker.popen.poll() is None, "the worker died"
    assert scheduler.popen.poll() is None, "the scheduler loop died"
    assert "scheduler tick failed" in scheduler.log.read_text(), "the loop never met the outage"
    # and nothing is half-written: versions match the events, chains hold, and every
    # step's effect happened once
    assert_histories_intact(ids)
    assert effects()[0] == WORKFLOWS * STEPS
    assert WorkflowEvent.objects.filter(type="ActivitySucceeded").count() == WORKFLOWS * STEPS
