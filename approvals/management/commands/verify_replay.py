from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.replay import replay_verify

from ._tenants import tenant_by_slug

DIVERGED = "{n} workflow(s) do not replay to their stored state."


class Command(BaseCommand):
    help = (
        "Replay every workflow's history under its pinned workflow template version and "
        "compare with the stored snapshot and status. Exits 1 on any divergence."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"]) if options["tenant"] else None
        found, checked = replay_verify(tenant=tenant)
        for divergence in found:
            self.stdout.write(f"DIVERGED {divergence}")
        if found:
            raise CommandError(DIVERGED.format(n=len({d.workflow_id for d in found})))
        self.stdout.write(f"OK: {checked} workflow(s) replay to their stored state.")
