"""The loop that runs the periodic jobs (workers/jobs.py: deliver due timers, sweep the
activity outbox, prune fired timers) in-process. Celery beat runs the same list as
tasks in production; this loop serves the embedded mode (``make run``) and
deployments that prefer one small process to beat."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.db import close_old_connections

from . import tasks
from .jobs import PERIODIC_JOBS

log = logging.getLogger(__name__)


def scheduler_tick() -> dict[str, Any]:
    """Run every periodic job once, in the list's order; returns each job's result by
    its name."""
    return {job.name: tasks.PERIODIC_TASKS[job.task]() for job in PERIODIC_JOBS}


def scheduler_loop(*, stop: threading.Event, interval: float) -> None:
    """Tick every ``interval`` seconds, measured start to start, until ``stop``."""
    while not stop.is_set():
        started = time.monotonic()
        try:
            scheduler_tick()
        except Exception:  # keep going: a database restart must not end the loop
            log.exception("scheduler tick failed; retrying in %.1fs", interval)
        finally:
            close_old_connections()
        stop.wait(max(0.0, interval - (time.monotonic() - started)))


def start_in_background(interval: float) -> threading.Event:
    stop = threading.Event()
    thread = threading.Thread(
        target=scheduler_loop,
        kwargs={"stop": stop, "interval": interval},
        name="approvals-scheduler",
        daemon=True,
    )
    thread.start()
    return stop
