from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from approvals.demo import DEMO_PASSWORD, DESCRIPTIONS, seed_demo


class Command(BaseCommand):
    help = "Create the demo organisation Acme, its people and workflow templates (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = seed_demo()
        self.stdout.write(f"Demo organisation {tenant.name!r} is ready. Sign in with:")
        for username, what in DESCRIPTIONS.items():
            self.stdout.write(f"  {username:<8} / {DEMO_PASSWORD}   {what}")
