"""``python manage.py accept_number_forms --tenant SLUG --reason TEXT``: the repair path
for events hashed before numbers had one form (docs/audit.md, "Numbers")."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from approvals.audit.verify import ACCEPT_ACTION, audit_verify

from ._overrides import override_from_command
from ._tenants import tenant_by_slug

NOTHING_TO_ACCEPT = (
    "Nothing to accept: no event of {tenant} verifies only with its numbers spelled as "
    "they were sent."
)
REASON_NEEDED = 'Say why you accept these events: --reason "...".'
RECORDED = (
    "Accepted {n} event(s) hashed with their numbers as sent: recorded as audit override "
    "#{id} by {operator}. verify_audit and the Verify page now say so in their verdict."
)


class Command(BaseCommand):
    help = (
        "Accept the events of an organisation whose hash was taken over a number as it was "
        "sent (1e+17) while the database stored it in its own form (100000000000000000), "
        "before numbers had one form: only those that verify with exactly their stored "
        "values respelled. Records who, when, why and which events in the append-only, "
        "signed audit overrides; nothing in the history is rewritten."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", required=True)
        parser.add_argument("--reason", default="", help="why (required to record)")

    def handle(self, *args: Any, **options: Any) -> None:
        tenant = tenant_by_slug(options["tenant"])
        breaks, _ = audit_verify(tenant=tenant)
        found = [b for b in breaks if b.respelled is not None]
        if not found:
            self.stdout.write(NOTHING_TO_ACCEPT.format(tenant=tenant.slug))
            return
        for problem in found:
            self.stdout.write(f"TO ACCEPT {problem}")
        override = override_from_command(
            tenant=tenant,
            action=ACCEPT_ACTION,
            reason=options["reason"],
            problems=[str(b) for b in found],
            reason_needed=REASON_NEEDED,
        )
        self.stdout.write(RECORDED.format(n=len(found), id=override.pk, operator=override.operator))
