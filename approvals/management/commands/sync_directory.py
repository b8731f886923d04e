"""``python manage.py sync_directory FILE --tenant SLUG``: bring one organisation's
people in line with an export of the company directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.services.directory import (
    CHOSEN,
    GROUP,
    NAMED,
    PRINCIPAL,
    DeactivationRefused,
    DirectoryInvalid,
    directory_parse,
    directory_sync,
)

from ._tenants import tenant_by_slug

UNREADABLE = "Cannot read {path}: {problem}"


# Why each task went where it went, in the command's report.
HOW = {
    GROUP: "back to the group",
    PRINCIPAL: "back to the person it was held for",
    NAMED: "to the manager",
    CHOSEN: "chosen",
}


class Command(BaseCommand):
    help = (
        "Create and update the organisation's people from a CSV (columns username, email, "
        "first_name, last_name, manager, groups separated by ';', active) or JSON export. "
        "Deactivated people's open tasks go to their manager or the organisation's fallback "
        "approver. All or nothing: any problem changes nothing and exits 1."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the directory export (.csv or .json)")
        parser.add_argument("--tenant", metavar="SLUG", required=True)
        parser.add_argument(
            "--format", choices=["csv", "json"], help="default: from the file's extension"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        path = Path(options["file"])
        fmt = options["format"] or ("json" if path.suffix.lower() == ".json" else "csv")
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(UNREADABLE.format(path=path, problem=exc)) from exc
        try:
            report = directory_sync(tenant=tenant, entries=directory_parse(text, fmt=fmt))
        except (DirectoryInvalid, DeactivationRefused) as exc:
            raise CommandError(str(exc)) from exc
        for name in report.created:
            self.stdout.write(f"created {name}")
        for name in report.updated:
            self.stdout.write(f"updated {name}")
        for name in report.reactivated:
            self.stdout.write(f"reactivated {name}")
        for result in report.deactivated:
            moved = ", ".join(
                f"{h.workflow_id} -> {' and '.join(h.receivers)} ({HOW[h.kind]})"
                for h in result.moved
            )
            self.stdout.write(f"deactivated {result.username}; tasks handed on: {moved or 'none'}")
