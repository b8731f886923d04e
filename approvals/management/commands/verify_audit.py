from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.verify import audit_verify

from ._tenants import tenant_by_slug

BROKEN = "{n} problem(s) found in the audit trail."


class Command(BaseCommand):
    help = (
        "Recompute every workflow's hash chain, compare it with the workflow's recorded "
        "version and last hash and with the signed seals; name every break. Exits 1 when "
        "it finds any."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"]) if options["tenant"] else None
        breaks, checked = audit_verify(tenant=tenant)
        for problem in breaks:
            self.stdout.write(f"BROKEN {problem}")
        if breaks:
            raise CommandError(BROKEN.format(n=len(breaks)))
        self.stdout.write(f"OK: {checked} workflow chain(s) intact and matching their seals.")
