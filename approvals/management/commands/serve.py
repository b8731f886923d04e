from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from approvals.workers.scheduler import start_in_background


class Command(BaseCommand):
    help = (
        "Serve the app for development with the timer poller and the activity runner "
        "in-process (no Redis, no Celery needed)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args: Any, addrport: str, **options: Any) -> None:
        if settings.APPROVALS_EMBEDDED_WORKER:
            start_in_background(settings.APPROVALS_POLL_INTERVAL_SECONDS)
            self.stdout.write("Timer poller and activity runner are running in-process.")
        call_command("runserver", addrport, use_reloader=False)
