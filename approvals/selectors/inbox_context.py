"""What an approver needs beside a row of their inbox, for a page of rows at once: how
many files (receipts) the request carries, and who approved it before in this round
(since it was last submitted), each with the step they approved."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..models import WorkflowEvent

# Events after which earlier approvals no longer count: the request came in anew.
_ROUND_STARTS = frozenset({"WorkflowStarted", "Resubmitted"})


@dataclass
class RowContext:
    receipts: int = 0
    approved: list[tuple[str, str]] = field(default_factory=list)  # (username, step)


def inbox_context(workflow_ids: Iterable[Any]) -> dict[str, RowContext]:
    """``RowContext`` by workflow id (as text), in one query over the page's histories."""
    ids = list({str(i) for i in workflow_ids})
    out = {i: RowContext() for i in ids}
    if not ids:
        return out
    events = (
        WorkflowEvent.objects.filter(
            workflow_id__in=ids,
            type__in=["FileAttached", "DecisionRecorded", *_ROUND_STARTS],
        )
        .order_by("workflow_id", "seq")
        .values_list("workflow_id", "type", "actor__username", "payload")
    )
    for wid, kind, actor, payload in events:
        row = out[str(wid)]
        if kind == "FileAttached":
            row.receipts += 1
        elif kind in _ROUND_STARTS:
            row.approved = []
        elif payload.get("decision") == "approve" and actor:
            row.approved.append((actor, str(payload.get("step") or "")))
    return out
