"""The loop that delivers due timers and sweeps the activity outbox. Celery beat runs
the same two services as tasks in production; this loop serves the embedded mode
(``make run``) and deployments that prefer one small process to beat."""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections

from .services.activities import attempt_sweep
from .services.timers import timer_drain, timer_prune

log = logging.getLogger(__name__)


def scheduler_tick() -> tuple[int, dict[str, int]]:
    fired = timer_drain()
    swept = attempt_sweep()
    timer_prune(older_than=dt.timedelta(days=settings.APPROVALS_FIRED_TIMER_RETENTION_DAYS))
    return fired, swept


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
