"""``python manage.py rebuild_read_models [--tenant SLUG] [--check]``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.runtime.rebuild import read_models_check, read_models_rebuild

from ._tenants import tenant_by_slug

OUT_OF_LINE = "{n} workflow(s) have read models out of line with their events."


class Command(BaseCommand):
    help = (
        "Rebuild the inbox, the pending timers, the open activity attempts, the participants "
        "and the workflows' search fields from the events alone, one workflow at a time "
        "under its lock. With --check, only report what is out of line (exit 1 if any)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")
        parser.add_argument("--check", action="store_true", help="report, change nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"]) if options["tenant"] else None
        tenant_id = tenant.pk if tenant is not None else None
        if options["check"]:
            found = read_models_check(tenant_id=tenant_id)
            for workflow_id, name in found:
                self.stdout.write(f"OUT OF LINE {workflow_id} {name}")
            if found:
                raise CommandError(OUT_OF_LINE.format(n=len({w for w, _ in found})))
            self.stdout.write("OK: every read model matches the events.")
            return
        report = read_models_rebuild(tenant_id=tenant_id)
        fixed = ", ".join(f"{name} of {n}" for name, n in report.changed.items() if n)
        self.stdout.write(
            f"Rebuilt {report.workflows} workflow(s); put right: {fixed or 'nothing'}."
        )
