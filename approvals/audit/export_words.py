"""The sentence beside each event of the audit export: what the request page's
history says of it (``web.present.sentence``), so an auditor reading the CSV in a
spreadsheet reads words, not only the raw event type."""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from ..models import Workflow
from ..web import present
from ..web.story import group_names_in, names_in, raw_definition


class EventSentences:
    """``sentences(row)`` for the rows of an export as they go by: each workflow's
    context (its template, data and the names it mentions) is read once, when its first
    event comes, and kept while its events follow one another."""

    def __init__(self, tenant_id: int) -> None:
        self._tenant_id = tenant_id
        self._workflow_id: str | None = None
        self._ctx: present.Context | None = None
        self._names: dict[str, str] = {}

    def __call__(self, row: Mapping[str, Any]) -> str:
        ctx = self._context(str(row["workflow_id"]))
        if ctx is None:
            return ""
        payload = row["payload"] if isinstance(row["payload"], Mapping) else {}
        entry = SimpleNamespace(
            actor=row.get("actor"), on_behalf_of=row.get("on_behalf_of"), payload=payload
        )
        self._know(set(present.usernames_in([entry])))
        try:
            return present.sentence(
                str(row["type"]),
                payload,
                actor=row.get("actor"),
                on_behalf_of=row.get("on_behalf_of"),
                ctx=ctx,
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return ""  # an event the words cannot read: the raw type still says it

    def _context(self, workflow_id: str) -> present.Context | None:
        if workflow_id == self._workflow_id:
            return self._ctx
        self._workflow_id = workflow_id
        wf = (
            Workflow.objects.filter(pk=workflow_id, tenant_id=self._tenant_id)
            .select_related("template", "submitter")
            .first()
        )
        if wf is None:
            self._ctx = None
            return None
        raw = raw_definition(wf)
        submitter = wf.submitter.username if wf.submitter else None
        self._know({submitter, *present.named_approvers(raw)})
        self._names.update(group_names_in(self._tenant_id, raw))
        self._ctx = present.Context(
            raw_definition=raw, data=wf.data, names=self._names, submitter=submitter
        )
        return self._ctx

    def _know(self, usernames: set[Any]) -> None:
        wanted = {u for u in usernames if isinstance(u, str) and u and u not in self._names}
        if wanted:
            self._names.update(names_in(self._tenant_id, wanted))
            self._names.update({u: u for u in wanted if u not in self._names})
