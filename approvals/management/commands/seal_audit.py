from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.seal import SealKeyMissing, seal_all

from ._tenants import tenant_by_slug


class Command(BaseCommand):
    help = (
        "Seal every workflow's chain head: record a signed digest per organisation in the "
        "append-only seal table and write it to the log. Run at least daily."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")

    def handle(self, *args: Any, **options: Any) -> None:
        tenants = [tenant_by_slug(options["tenant"])] if options["tenant"] else None
        try:
            seals = seal_all(tenants=tenants)
        except SealKeyMissing as exc:
            raise CommandError(str(exc)) from exc
        for seal in seals:
            tenant = seal.tenant.slug if seal.tenant else "*"
            self.stdout.write(f"{tenant}: {seal} digest {seal.digest}")
