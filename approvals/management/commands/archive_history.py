from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.archive import month_archive
from approvals.audit.retention import ArchiveError, month_parse


class Command(BaseCommand):
    help = (
        "Move a month of workflow history out of the database into the archive store "
        "(STORAGES['archive']): per organisation, gzip JSON Lines and a signed manifest, "
        "read back and checked before the month's partition is dropped. Refused, with "
        "the reasons, while a workflow of the month runs, finished within its "
        "organisation's live window, or is on legal hold. Safe to run again after a run "
        "that stopped. The periodic job archive-history does this for every due month."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--month", required=True, metavar="YYYY-MM")
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be archived; change nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            month = month_parse(options["month"])
            result = month_archive(month, dry_run=options["dry_run"])
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        when = f"{month:%B %Y}"
        if result.dry_run and result.dropped:
            self.stdout.write(f"{when} is already archived. Nothing was changed (dry run).")
            return
        if result.dry_run:
            self.stdout.write(
                f"{when} can be archived: {result.events} event(s) of "
                f"{len(result.tenants)} organisation(s). Nothing was changed (dry run)."
            )
            return
        self.stdout.write(
            f"{when} archived: {result.events} event(s) of {len(result.tenants)} "
            "organisation(s) written, read back and checked; its partition is dropped."
        )
