from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from approvals.audit.archived_index import index_backfill


class Command(BaseCommand):
    help = (
        "Index the workflows of every archived month from its manifest and events file, "
        "so their pages, the API, the search and the export read them in place. Safe to "
        "run again; a month already deleted after its retention is left as it is."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        done = index_backfill()
        for (tenant_id, month), count in sorted(done.items()):
            self.stdout.write(f"{month:%B %Y} (organisation {tenant_id}): {count} workflow(s).")
        total = sum(done.values())
        self.stdout.write(f"{total} archived workflow(s) of {len(done)} month(s) indexed.")
