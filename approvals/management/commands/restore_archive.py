from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.restore import month_restore
from approvals.audit.retention import ArchiveError, month_parse


class Command(BaseCommand):
    help = (
        "Bring an archived month of workflow history back into the database (for an "
        "investigation): the archive is checked first, then its events are put back in "
        "the month's partition in one transaction."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--month", required=True, metavar="YYYY-MM")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            month = month_parse(options["month"])
            restored = month_restore(month)
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"{month:%B %Y} restored: {sum(restored.values())} event(s) of "
            f"{len(restored)} organisation(s) checked against the archive and put back."
        )
