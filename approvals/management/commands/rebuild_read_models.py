"""``python manage.py rebuild_read_models [--tenant SLUG] [--check]
[--despite-failed-verification --reason TEXT]``."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.audit.verify import audit_verify
from approvals.models import Tenant
from approvals.runtime.rebuild import (
    read_column_problems,
    read_models_check,
    read_models_rebuild,
)

from ._overrides import override_from_command
from ._tenants import tenant_by_slug

OUT_OF_LINE = "{n} workflow(s) have read models out of line with their events."
REFUSED = (
    "The audit trail does not verify, or a workflow column the rebuild reads disagrees with "
    "the events ({n} problem(s), listed above): a rebuild would make "
    "the workflows agree with whatever events are left and hide what was done. Find out "
    "what happened first; to go ahead anyway, run again with "
    '--despite-failed-verification --reason "why" (the override is recorded).'
)
REASON_NEEDED = 'Say why you go ahead despite the failed verification: --reason "...".'
OVERRIDDEN = (
    "Going ahead despite {n} problem(s) in the audit trail: recorded as audit override "
    "#{id} by {operator}."
)
# Problems listed before a refusal; the rest are counted (verify_audit lists them all).
_SHOWN = 50


class Command(BaseCommand):
    help = (
        "Rebuild the inbox, the pending timers, the open activity attempts, the participants, "
        "the step visits the analytics page reads "
        "and the workflows' search fields from the events alone, one workflow at a time "
        "under its lock. With --check, only report what is out of line (exit 1 if any)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")
        parser.add_argument("--check", action="store_true", help="report, change nothing")
        parser.add_argument(
            "--despite-failed-verification",
            action="store_true",
            help="rebuild even though verify_audit finds problems (recorded, with --reason)",
        )
        parser.add_argument("--reason", default="", help="why (with the flag above)")

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
        self._verified_or_overridden(tenant, options)
        report = read_models_rebuild(tenant_id=tenant_id)
        fixed = ", ".join(f"{name} of {n}" for name, n in report.changed.items() if n)
        self.stdout.write(
            f"Rebuilt {report.workflows} workflow(s); put right: {fixed or 'nothing'}."
        )

    def _verified_or_overridden(self, tenant: Tenant | None, options: dict[str, Any]) -> None:
        """Refuse a rebuild over a history that fails verification, or over a workflow
        column it reads that disagrees with the events, unless the operator says why;
        that decision is recorded (append-only, signed) and logged."""
        found, _ = audit_verify(tenant=tenant)
        breaks = [
            *map(str, found),
            *read_column_problems(tenant_id=tenant.pk if tenant is not None else None),
        ]
        if not breaks:
            return
        for problem in breaks[:_SHOWN]:
            self.stdout.write(f"BROKEN {problem}")
        if len(breaks) > _SHOWN:
            self.stdout.write(f"... and {len(breaks) - _SHOWN} more (verify_audit lists all)")
        if not options["despite_failed_verification"]:
            raise CommandError(REFUSED.format(n=len(breaks)))
        override = override_from_command(
            tenant=tenant,
            action="rebuild_read_models",
            reason=options["reason"],
            problems=breaks,
            reason_needed=REASON_NEEDED,
        )
        self.stdout.write(
            OVERRIDDEN.format(n=len(breaks), id=override.pk, operator=override.operator)
        )
