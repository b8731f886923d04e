"""The decisions held for their undo window on the workflows a page shows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models import HeldDecision
from ..models.held import OPEN_HELD


def held_open(*, tenant_id: int, workflow_ids: Iterable[Any]) -> dict[str, HeldDecision]:
    """Each workflow's open held decision (at most one), by workflow id, with its actor."""
    ids = list(workflow_ids)
    if not ids:
        return {}
    rows = HeldDecision.objects.filter(OPEN_HELD, tenant_id=tenant_id, workflow_id__in=ids)
    return {str(h.workflow_id): h for h in rows.select_related("actor")}
