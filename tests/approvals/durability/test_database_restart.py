"""The worker and the scheduler loop recover from a PostgreSQL restart by themselves,
and nothing is half-written. The restart is real, so it cuts every connection to the
server: it restarts only a private cluster, never the machine's server that other work
shares. ``make test-pg18`` runs it on the embedded PostgreSQL (``config.devdb exec``,
which names the cluster by APPROVALS_DEV_PGDATA); elsewhere it is skipped, and under
pytest-xdist with more than one worker too (the others' tests would lose their
connections mid-test)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from django.db import connection
from django.db.utils import DatabaseError, InterfaceError

from approvals.models import WorkflowEvent
from config import devdb

from .activities import DELAY_KEY, effects
from .conftest import Processes, wait_until
from .support import action_template, assert_histories_intact, publish, start, statuses

WORKFLOWS = 20
STEPS = 2
OUTAGE = 3.0  # seconds; several ticks of the scheduler loop

pytestmark = pytest.mark.topology


def private_cluster() -> Path | None:
    """The development cluster this test's database lives on, if it does."""
    from django.conf import settings

    pgdata = devdb.data_dir()
    running = devdb.url(pgdata)
    host = settings.DATABASES["default"].get("HOST") or ""
    if running is None or not host.startswith("/"):
        return None
    return pgdata if running.split("@", 1)[1].startswith(quote(host, safe="")) else None


def restart_postgresql(pgdata: Path) -> None:
    """A restart that keeps the server down for OUTAGE seconds, so that every process
    meets it (a plain restart can fall between two ticks of the scheduler)."""
    assert devdb.stop(pgdata), "the cluster was not running"
    try:
        time.sleep(OUTAGE)
    finally:
        devdb.start(pgdata)


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
    int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1) > 1,
    reason="restarts the PostgreSQL server the other xdist workers use (make test-pg18 runs it)",
)
@pytest.mark.django_db(transaction=True)
def test_worker_and_scheduler_recover_from_a_postgresql_restart(
    acme: Any, broker: redis.Redis, effects_table: None, processes: Processes, queue: str
) -> None:
    pgdata = private_cluster()
    if pgdata is None:
        pytest.skip("restarts only a private cluster: make test-pg18 runs it on one")
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
    restart_postgresql(pgdata)
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
