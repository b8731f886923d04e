"""The timer poller and the scheduler loop as separate processes, for the durability
tests. Run with DATABASE_URL (and CELERY_BROKER_URL) in the environment:

``python poller.py drain SHIFT_SECONDS BATCH [GO_FILE]``
    touches GO_FILE.ready.<pid> and waits until GO_FILE exists (so that racing
    pollers start together), then runs
    ``timer_drain`` with the clock moved SHIFT_SECONDS ahead and prints
    ``{"fired": n}``.

``python poller.py loop INTERVAL REDISPATCH_AFTER``
    runs ``approvals.workers.scheduler.scheduler_loop`` until SIGTERM, with the sweeper
    re-dispatching lost attempts after REDISPATCH_AFTER seconds instead of 30.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from approvals import clock  # noqa: E402
from approvals.workers import scheduler, tasks  # noqa: E402
from approvals.workers.activities import attempt_sweep  # noqa: E402
from approvals.workers.timers import timer_drain  # noqa: E402
from tests.approvals.durability import activities  # noqa: E402, F401  (registers them)

GO_WAIT_LIMIT = 120.0


def drain(shift: float, batch: int, go_file: str | None) -> None:
    if go_file:
        Path(f"{go_file}.ready.{os.getpid()}").touch()
        deadline = time.monotonic() + GO_WAIT_LIMIT
        while not os.path.exists(go_file):
            if time.monotonic() > deadline:
                sys.exit("no go signal")
            time.sleep(0.01)
    with clock.shifted(dt.timedelta(seconds=shift)):
        fired = timer_drain(batch=batch, max_batches=100_000)
    print(json.dumps({"fired": fired}), flush=True)


def loop(interval: float, redispatch_after: float) -> None:
    tasks.attempt_sweep = functools.partial(  # what the sweep job calls
        attempt_sweep, redispatch_after=redispatch_after
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    scheduler.scheduler_loop(stop=stop, interval=interval)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "drain":
        drain(float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    elif mode == "loop":
        loop(float(sys.argv[2]), float(sys.argv[3]))
    else:
        sys.exit(f"unknown mode {mode!r}")
