from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from approvals.audit.archived_index import archived_delete_expired


class Command(BaseCommand):
    help = (
        "Delete the archived months whose workflows are all past their retention and on "
        "no legal hold, leaving a tombstone for each workflow; say why the others stay."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        result = archived_delete_expired()
        for (tenant_id, month), count in sorted(result.deleted.items()):
            self.stdout.write(
                f"{month:%B %Y} (organisation {tenant_id}): deleted, {count} tombstone(s) left."
            )
        for (tenant_id, month), why in sorted(result.kept.items()):
            reasons = "; ".join(why) or "nothing to delete"
            self.stdout.write(f"{month:%B %Y} (organisation {tenant_id}) kept: {reasons}.")
