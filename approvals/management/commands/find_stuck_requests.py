from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from approvals.models import Workflow
from approvals.selectors.stuck import stuck_requests
from approvals.web.present import humanise
from approvals.words.steps import step_title

from ._tenants import tenant_by_slug

FOUND = "{n} running request(s) nobody can finish: add an approver, or cancel them."
NONE = "No running request is stuck: each has someone who can finish the step it waits in."
LINE = "{org}: {request} waits in the {step} step, and nobody can finish it: {why}."


class Command(BaseCommand):
    help = (
        "Find running requests nobody can finish: the approval step they wait in has no "
        "open task that a person who can still act could complete. One sentence per "
        "request, the longest-waiting first (at most 200). Exits 1 when any is found."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", metavar="SLUG", help="only this organisation")

    def handle(self, *args: Any, **options: Any) -> None:
        workflows = Workflow.objects.all()
        if options["tenant"]:
            workflows = workflows.filter(tenant=tenant_by_slug(options["tenant"]))
        found = stuck_requests(workflows)
        for item in found:
            wf = item.workflow
            raw = wf.template.definition
            title = (raw or {}).get("title") or humanise(wf.template_key)
            self.stdout.write(
                LINE.format(
                    org=wf.tenant.slug,
                    request=f"{title} {wf.subject_id}",
                    step=step_title(raw, item.step),
                    why=item.why,
                )
            )
        if found:
            raise CommandError(FOUND.format(n=len(found)))
        self.stdout.write(NONE)
