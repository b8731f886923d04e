from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.retention import ArchiveError, retention_change

from ._tenants import tenant_by_slug


class Command(BaseCommand):
    help = (
        "Set how long an organisation keeps a workflow's history after it finishes: "
        "--years, the retention (default APPROVALS_RETENTION_YEARS, seven), after which an "
        "archived month may be deleted; --live-months, the live window (default "
        "APPROVALS_LIVE_MONTHS, twelve), after which the archiver moves it out of the "
        "database. The live window is from 1 month to the retention."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, metavar="SLUG")
        parser.add_argument("--years", type=int)
        parser.add_argument("--live-months", type=int)
        parser.add_argument("--by", required=True, metavar="NAME", help="who decided it")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        if options["years"] is None and options["live_months"] is None:
            raise CommandError("Say what to set: --years, --live-months or both.")
        try:
            change = retention_change(
                tenant=tenant,
                years=options["years"],
                live_months=options["live_months"],
                by=options["by"],
            )
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        policy = change.policy
        self.stdout.write(
            f"{tenant.name} keeps a workflow's history {policy.years} year(s) after it "
            f"finishes, {policy.live_months} month(s) of it in the live database."
        )
        if change.locks:
            self.stdout.write(change.locks)
