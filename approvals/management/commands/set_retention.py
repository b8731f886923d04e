from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.retention import ArchiveError, retention_set

from ._tenants import tenant_by_slug


class Command(BaseCommand):
    help = (
        "Set how many years an organisation keeps a workflow's history after it finishes "
        "(default APPROVALS_RETENTION_YEARS, seven) before archive_history may move it out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, metavar="SLUG")
        parser.add_argument("--years", required=True, type=int)
        parser.add_argument("--by", required=True, metavar="NAME", help="who decided it")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        try:
            policy = retention_set(tenant=tenant, years=options["years"], by=options["by"])
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{tenant.name} keeps a workflow's history {policy.years} year(s) after it finishes."
        )
