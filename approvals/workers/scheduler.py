"""The loop that runs the periodic jobs (workers/jobs.py: deliver due timers, sweep the
activity outbox, prune fired timers) in-process. Celery beat runs the same list as
tasks in production; this loop serves the embedded mode (``make run``) and
deployments that prefer one small process to beat."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import close_old_connections

from . import tasks
from .jobs import PERIODIC_JOBS

log = logging.getLogger(__name__)


def scheduler_tick(names: set[str] | None = None) -> dict[str, Any]:
    """Run the periodic jobs named (every job when None) once, in the list's order;
    returns each job's result by its name."""
    return {
        job.name: tasks.PERIODIC_TASKS[job.task]()
        for job in PERIODIC_JOBS
        if names is None or job.name in names
    }


def job_intervals() -> dict[str, float]:
    """Seconds between two runs of each job, from the same settings beat reads."""
    return {
        job.name: float(getattr(settings, job.interval_setting, job.default_seconds))
        for job in PERIODIC_JOBS
    }


def scheduler_loop(*, stop: threading.Event, interval: float) -> None:
    """Tick every ``interval`` seconds, measured start to start, until ``stop``; each
    tick runs the jobs whose own interval has passed. As under beat, a job with a
    longer interval than the tick (pruning, digests, seals) first runs one interval
    after the start."""
    every = job_intervals()
    start = time.monotonic()
    next_at = {name: start + (0.0 if s <= interval else s) for name, s in every.items()}
    while not stop.is_set():
        started = time.monotonic()
        due = {name for name, at in next_at.items() if at <= started}
        try:
            scheduler_tick(due)
        except Exception:  # keep going: a database restart must not end the loop
            log.exception("scheduler tick failed; retrying in %.1fs", interval)
        finally:
            close_old_connections()
        for name in due:
            next_at[name] = started + every[name]
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
