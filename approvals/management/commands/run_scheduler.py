from __future__ import annotations

import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from approvals.workers.scheduler import scheduler_loop, scheduler_tick


class Command(BaseCommand):
    help = (
        "Run the periodic jobs (deliver due timers, sweep the activity outbox, prune fired"
        " timers) every few seconds, until stopped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument(
            "--interval", type=float, default=float(settings.APPROVALS_POLL_INTERVAL_SECONDS)
        )

    def handle(self, *args: Any, once: bool, interval: float, **options: Any) -> None:
        if once:
            results = scheduler_tick()
            self.stdout.write("; ".join(f"{name}: {result}" for name, result in results.items()))
            return
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
        scheduler_loop(stop=stop, interval=interval)
