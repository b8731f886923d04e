from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.retention import ArchiveError, hold_set
from approvals.models import User


class Command(BaseCommand):
    help = (
        "Put a legal hold on one workflow, or on the whole organisation, on behalf of an "
        "auditor or organisation admin, with a reason (or take it off with --release). "
        "A held workflow's month stays live, and its archive is never deletable. "
        "Recorded append-only and signed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--by", required=True, metavar="USERNAME", help="who puts it")
        parser.add_argument("--reason", required=True)
        parser.add_argument("--workflow", metavar="ID", help="one workflow (default: all)")
        parser.add_argument("--release", action="store_true", help="take the hold off")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["by"], is_active=True).first()
        if user is None:
            raise CommandError(f"No active person signs in as {options['by']!r}.")
        try:
            hold = hold_set(
                by=user,
                reason=options["reason"],
                workflow_id=options["workflow"],
                release=options["release"],
            )
        except ArchiveError as exc:
            raise CommandError(str(exc)) from None
        what = f"workflow {hold.workflow_id}" if hold.workflow_id else "the whole organisation"
        done = "taken off" if options["release"] else "put on"
        self.stdout.write(f"Legal hold {done} {what} by {user.username}: {hold.reason}")
