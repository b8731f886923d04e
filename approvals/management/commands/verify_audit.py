from __future__ import annotations

import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.export_check import export_problems
from approvals.audit.export_words import EventSentences
from approvals.audit.verify import audit_verify
from approvals.runtime import replica

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
        parser.add_argument(
            "--workflow",
            metavar="ID",
            help="only this workflow's chain, and its inclusion in its organisation's last "
            "daily seal",
        )
        parser.add_argument(
            "--all-days",
            action="store_true",
            help="recompute every daily seal's root from the history, not only the last "
            "day's (each day reads every workflow's head as of that day: workflows x days). "
            "Without it every day's signature and the chain of days are checked, and the "
            "last day's root, which holds every workflow's current head, is recomputed",
        )

        parser.add_argument(
            "--export",
            metavar="FILE",
            help="also check an export (JSON Lines or CSV): every column must be what the "
            "database's hashed event says",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"]) if options["tenant"] else None
        workflow_id = options["workflow"]
        if workflow_id is not None:
            try:
                workflow_id = uuid.UUID(workflow_id)
            except ValueError:
                raise CommandError(f"{options['workflow']!r} is not a workflow id.") from None
        notes: list[str] = []

        def verify() -> tuple[list[Any], int]:
            notes.clear()  # read again from the primary if the replica fails under it
            return audit_verify(
                tenant=tenant, workflow_id=workflow_id, notes=notes, all_days=options["all_days"]
            )

        found, checked = replica.from_replica(verify)
        breaks = [str(b) for b in found]
        if workflow_id is not None and not checked and not found:
            raise CommandError(f"No workflow {workflow_id} to verify.")
        if options["export"]:
            breaks.extend(self._export(options["export"], tenant))
        # The verdict first: what is broken, or OK; then what the daily seals showed.
        for problem in breaks:
            self.stdout.write(f"BROKEN {problem}")
        if not breaks:
            self.stdout.write(f"OK: {checked} workflow chain(s) intact and matching their seals.")
            if options["export"]:
                self.stdout.write(f"OK: every column of {options['export']} is its hashed event's.")
        for note in notes:
            self.stdout.write(note)
        if breaks:
            raise CommandError(BROKEN.format(n=len(breaks)))

    def _export(self, path: str, tenant: Any) -> list[str]:
        try:
            problems = export_problems(path, tenant=tenant, sentences=_sentences())
            return [f"{problem} (in {path})" for problem in problems]
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            raise CommandError(f"{path}: not an export that can be read ({exc}).") from None


def _sentences() -> Any:
    """The words a CSV export's ``sentence`` column says of each event, each in its own
    organisation's words (``export_words.EventSentences``)."""
    per_tenant: dict[int, EventSentences] = {}

    def sentence(row: Any) -> str:
        tenant_id = int(row["tenant_id"])
        if tenant_id not in per_tenant:
            per_tenant[tenant_id] = EventSentences(tenant_id)
        return per_tenant[tenant_id](row)

    return sentence
