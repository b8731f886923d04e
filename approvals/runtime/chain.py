"""The hash chain over a workflow's events: each event's hash covers its content and
the hash before it. The command path writes it (``runtime.commands``); the history
check reads it (``selectors.workflows.verify_chain``). Pure: no database here."""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple, Protocol


class EventRow(NamedTuple):
    """What an event's hash covers, in the order of the event table's columns
    (``commands._EVENT_COLUMNS``)."""

    workflow_id: Any
    seq: int
    type: str
    payload: dict[str, Any]
    request_id: str | None
    actor_id: int | None
    role: str
    on_behalf_of_id: int | None
    created_at: Any
    prev_hash: str


class HashedEvent(Protocol):
    """What ``event_hash`` reads: an ``EventRow`` or a stored ``WorkflowEvent``."""

    @property
    def prev_hash(self) -> str: ...

    @property
    def workflow_id(self) -> Any: ...

    @property
    def seq(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def payload(self) -> Any: ...

    @property
    def request_id(self) -> str | None: ...

    @property
    def actor_id(self) -> int | None: ...

    @property
    def role(self) -> str: ...

    @property
    def on_behalf_of_id(self) -> int | None: ...

    @property
    def created_at(self) -> Any: ...


def event_hash(row: HashedEvent) -> str:
    """SHA-256 of the event's content and the hash before it: editing or removing any
    event breaks every hash after it."""
    content = {
        "prev": row.prev_hash,
        "workflow": str(row.workflow_id),
        "seq": row.seq,
        "type": row.type,
        "payload": row.payload,
        "request_id": row.request_id,
        "actor": row.actor_id,
        "role": row.role,
        "on_behalf_of": row.on_behalf_of_id,
        "created_at": row.created_at.isoformat(),
    }
    blob = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
