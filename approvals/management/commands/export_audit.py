from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.dateparse import parse_date, parse_datetime

from approvals.audit.export import FORMATS, ExportFilter, audit_export
from approvals.audit.export_words import EventSentences
from approvals.models import time_bounds

from ._tenants import tenant_by_slug

BAD_TIME = "{option}: an ISO 8601 date or date and time (2026-01-31 or 2026-01-31T12:00:00Z)."


def _when(value: str | None, option: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        moment = parse_datetime(value)
        if moment is None and (day := parse_date(value)) is not None:
            moment = dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
    except ValueError:
        moment = None
    if moment is None:
        raise CommandError(BAD_TIME.format(option=option))
    problem = time_bounds.moment_problem(moment)  # past it, a conversion overflows
    if problem is not None:
        raise CommandError(f"{option}: {problem}")
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


class Command(BaseCommand):
    help = (
        "Write every event of one organisation's workflows to standard output, one row "
        "each, as CSV or JSON Lines, streamed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", required=True, metavar="SLUG")
        parser.add_argument("--format", choices=sorted(FORMATS), default="csv")
        parser.add_argument("--since", help="events at or after (ISO 8601, UTC if no zone)")
        parser.add_argument("--until", help="events before (ISO 8601, UTC if no zone)")
        parser.add_argument("--template", help="a workflow template key")
        parser.add_argument("--status")
        parser.add_argument("--subject", help="a subject id, or type:id")
        parser.add_argument("--person", help="a username that acted or submitted")
        parser.add_argument(
            "--workflow",
            action="append",
            metavar="ID",
            help="only this workflow (repeat for more); a JSON Lines export of whole "
            "histories then carries each one's proof in the last daily seal",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        filters = ExportFilter(
            template=options["template"],
            status=options["status"],
            since=_when(options["since"], "--since"),
            until=_when(options["until"], "--until"),
            subject=options["subject"],
            person=options["person"],
            workflow_ids=options["workflow"],
        )
        chunks = audit_export(
            tenant_id=tenant.pk,
            filters=filters,
            fmt=options["format"],
            sentences=EventSentences(tenant.pk),
        )
        for chunk in chunks:
            self.stdout.write(chunk, ending="")
