from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.services.draft_sweep import draft_files_sweep


class Command(BaseCommand):
    help = (
        "Delete the draft files in storage that no draft keeps (left by a crash between a "
        "draft's submission or deletion and the removal of its copies), once they are "
        "older than the grace period, as the periodic job sweep-draft-files does."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--grace-hours",
            type=float,
            default=None,
            help="keep files younger than this many hours (default: "
            "APPROVALS_DRAFT_FILES_GRACE_SECONDS, a day)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        hours = options["grace_hours"]
        if hours is None:
            hours = settings.APPROVALS_DRAFT_FILES_GRACE_SECONDS / 3600
        if not hours >= 1:  # also refuses NaN
            raise CommandError(
                "--grace-hours must be at least 1: a younger file may be an upload still "
                "being written. Nothing was deleted."
            )
        result = draft_files_sweep(grace=dt.timedelta(hours=hours))
        for name in result.removed:
            self.stdout.write(f"removed {name}")
        for name in result.failed:
            self.stderr.write(f"could not remove {name} (logged; the next run tries again)")
        self.stdout.write(
            f"{len(result.removed)} draft file(s) removed, {len(result.failed)} could not be."
        )
