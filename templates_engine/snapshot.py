"""State to and from JSON, for the snapshot a store keeps beside the history.

A snapshot is derived: it can always be rebuilt with ``replay``. ``SNAPSHOT_VERSION``
changes when the state's shape does; a store treats a snapshot of another version as
missing and replays instead.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from .events import Assignment, Timer
from .state import HeartbeatLease, PendingActivity, State

# 2: step_approvals; 3: rounds, compensations by round, heartbeat; 4: failed_step,
# undone, failed_attempt (for the admin's operations)
SNAPSHOT_VERSION = 4


def state_to_dict(state: State) -> dict[str, Any]:
    doc = asdict(state)
    doc["snapshot_version"] = SNAPSHOT_VERSION
    return doc


def state_from_dict(doc: dict[str, Any]) -> State | None:
    """The state in ``doc``, or None when it is of another snapshot version."""
    if doc.get("snapshot_version") != SNAPSHOT_VERSION:
        return None
    fields = dict(doc)
    fields.pop("snapshot_version")
    fields["assignments"] = tuple(Assignment(**a) for a in fields["assignments"])
    fields["approvals"] = tuple((actor, slot) for actor, slot in fields["approvals"])
    fields["timers"] = tuple(Timer(**t) for t in fields["timers"])
    fields["compensations"] = tuple((step, int(n)) for step, n in fields["compensations"])
    fields["rounds"] = tuple((step, int(n)) for step, n in fields["rounds"])
    heartbeat = fields["heartbeat"]
    fields["heartbeat"] = None if heartbeat is None else HeartbeatLease(**heartbeat)
    fields["step_approvals"] = tuple((step, user) for step, user in fields["step_approvals"])
    fields["undone"] = tuple(fields["undone"])
    activity = fields["activity"]
    fields["activity"] = None if activity is None else PendingActivity(**activity)
    return State(**fields)
