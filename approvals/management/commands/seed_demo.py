from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from approvals.demo import DEMO_PASSWORD, DESCRIPTIONS, seed_demo
from approvals.models import User
from approvals.services.tokens import token_issue

# What the demo ERP's token allows: start purchase requests, confirm signed contracts.
ERP_MAY_START = ["purchase-request"]
ERP_MAY_SIGNAL = ["contract_signed"]


class Command(BaseCommand):
    help = "Create the demo organisation Acme, its people and workflow templates (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = seed_demo()
        self.stdout.write(f"Demo organisation {tenant.name!r} is ready. Sign in with:")
        for username, what in DESCRIPTIONS.items():
            self.stdout.write(f"  {username:<8} / {DEMO_PASSWORD}   {what}")
        _, secret = token_issue(
            user=User.objects.get(username="erp"),
            name="demo ERP",
            may_start=ERP_MAY_START,
            may_signal=ERP_MAY_SIGNAL,
        )
        self.stdout.write(
            "The integration account erp has no password; its API token (starts "
            f"{', '.join(ERP_MAY_START)}, sends {', '.join(ERP_MAY_SIGNAL)}):\n"
            f"  Authorization: Bearer {secret}"
        )
