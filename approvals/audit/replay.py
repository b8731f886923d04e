"""Replay verification: every workflow's history, replayed under the workflow template
version it is pinned to, must give the state the command path stored (``snapshot``) and
its status. A divergence means the engine no longer reads a recorded history as it did,
or a snapshot was changed behind the command path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from templates_engine import public_status, replay
from templates_engine.events import event_from_dict
from templates_engine.snapshot import state_to_dict

from ..definitions import definition_for
from ..models import Tenant, Workflow, WorkflowEvent, history_month

NOT_AN_OBJECT = "its snapshot is {kind}, not an object: it was written behind the command path"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else type(value).__name__


@dataclass(frozen=True)
class Divergence:
    workflow_id: str
    what: str

    def __str__(self) -> str:
        return f"workflow {self.workflow_id}: {self.what}"


def _differences(stored: Any, replayed: Any, path: str = "") -> Iterator[str]:
    """Where two JSON documents differ, as paths (at most a few per workflow)."""
    if isinstance(stored, dict) and isinstance(replayed, dict):
        for key in sorted(set(stored) | set(replayed), key=str):
            yield from _differences(stored.get(key), replayed.get(key), f"{path}.{key}")
    elif stored != replayed:
        yield f"{path or '.'}: stored {stored!r:.80}, replayed {replayed!r:.80}"


def workflow_replay_check(*, workflow: Workflow) -> list[Divergence]:
    wid = str(workflow.pk)
    try:
        definition = definition_for(workflow.template_id)
        payloads = (
            WorkflowEvent.objects.filter(
                workflow_id=workflow.pk, history_month=history_month(workflow.created_at)
            )
            .order_by("seq")
            .values_list("payload", flat=True)
        )
        state = replay(definition, (event_from_dict(p) for p in payloads.iterator(500)))
    except Exception as exc:  # any failure to replay is what this check reports
        return [Divergence(wid, f"does not replay: {exc.__class__.__name__}: {exc}")]
    out: list[Divergence] = []
    if state.status != workflow.status:
        out.append(Divergence(wid, f"status {workflow.status}, replayed {state.status}"))
    if public_status(state) != workflow.public_status:
        out.append(
            Divergence(
                wid, f"public status {workflow.public_status}, replayed {public_status(state)}"
            )
        )
    # Through JSON, as the snapshot column stored it (tuples become lists).
    replayed = json.loads(json.dumps(state_to_dict(state), default=str))
    stored = workflow.snapshot
    if not isinstance(stored, dict):  # the command path writes only objects
        out.append(Divergence(wid, NOT_AN_OBJECT.format(kind=_kind(stored))))
        return out
    if stored and stored.get("snapshot_version") != replayed.get("snapshot_version"):
        # A snapshot of an older shape (the next command rewrites it): what it holds
        # must still agree with the replay, field by field; fields added since are new.
        stored = {k: v for k, v in stored.items() if k in replayed and k != "snapshot_version"}
        replayed = {k: replayed[k] for k in stored}
    if replayed != stored:
        diffs = list(_differences(stored, replayed))
        shown = "; ".join(diffs[:3]) + (f"; and {len(diffs) - 3} more" if len(diffs) > 3 else "")
        out.append(Divergence(wid, f"snapshot differs from the replayed state: {shown}"))
    return out


def replay_verify(*, tenant: Tenant | None = None) -> tuple[list[Divergence], int]:
    """Every divergence, and the number of workflows replayed."""
    workflows = Workflow.objects.order_by("pk")
    if tenant is not None:
        workflows = workflows.filter(tenant=tenant)
    found: list[Divergence] = []
    checked = 0
    for wf in workflows.iterator(200):
        checked += 1
        found.extend(workflow_replay_check(workflow=wf))
    return found, checked
