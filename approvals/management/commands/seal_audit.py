from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.daily_seal import daily_seals_due
from approvals.audit.seal import SealKeyMissing, seal_all

from ._tenants import tenant_by_slug


class Command(BaseCommand):
    help = (
        "Seal every workflow's chain head: record a signed digest per organisation in the "
        "append-only seal table and write it to the log. Run at least daily."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")
        parser.add_argument(
            "--daily",
            action="store_true",
            help="also seal each day that is over and not yet sealed (one daily seal per "
            "organisation and day), as the periodic job does",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenants = [tenant_by_slug(options["tenant"])] if options["tenant"] else None
        try:
            seals = seal_all(tenants=tenants)
            days = daily_seals_due(tenants=tenants) if options["daily"] else []
        except SealKeyMissing as exc:
            raise CommandError(str(exc)) from exc
        for day in days:
            self.stdout.write(f"{day.tenant.slug}: {day} root {day.root}")
        for seal in seals:
            tenant = seal.tenant.slug if seal.tenant else "*"
            self.stdout.write(f"{tenant}: {seal} digest {seal.digest}")
