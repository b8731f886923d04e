"""State to and from JSON, for the snapshot a store keeps beside the history.

A snapshot is derived: it can always be rebuilt with ``replay``. ``SNAPSHOT_VERSION``
changes when the state's shape does; a store treats a snapshot of another version as
missing and replays instead.
"""

from __future__ import annotations

import copy
from dataclasses import fields, is_dataclass
from operator import attrgetter
from typing import Any

from .events import Assignment, Timer
from .state import HeartbeatLease, PendingActivity, State

# 2: step_approvals; 3: rounds, compensations by round, heartbeat; 4: failed_step,
# undone, failed_attempt (for the admin's operations); 5: restarted_as, settled;
# 6: early_signals; 7: conversion; 8: withdrawn
SNAPSHOT_VERSION = 8


def state_to_dict(state: State) -> dict[str, Any]:
    """The state as plain values: what ``dataclasses.asdict`` gives, built without its
    generic walk (a snapshot is written with every command)."""
    doc = _plain(state)
    doc["snapshot_version"] = SNAPSHOT_VERSION
    return doc


_AS_IS = frozenset((str, int, float, bool, type(None)))
# a dataclass's field names and a getter of all their values in one call
_NAMES: dict[type, tuple[tuple[str, ...], Any]] = {}


def _plain(value: Any) -> Any:
    """``value`` as ``asdict`` converts it: dataclasses to dicts, tuples, lists and dicts
    rebuilt around converted items, anything else deep-copied."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is tuple:
        return tuple([v if type(v) in _AS_IS else _plain(v) for v in value])
    if kind is list:
        return [v if type(v) in _AS_IS else _plain(v) for v in value]
    if kind is dict:
        return {
            (k if type(k) in _AS_IS else _plain(k)): (v if type(v) in _AS_IS else _plain(v))
            for k, v in value.items()
        }
    known = _NAMES.get(kind)
    if known is None and is_dataclass(value):
        names = tuple(f.name for f in fields(value))
        known = _NAMES[kind] = (names, _values_of(names))
    if known is not None:
        names, getter = known
        return {
            name: (v if type(v) in _AS_IS else _plain(v))
            for name, v in zip(names, getter(value), strict=True)
        }
    return copy.deepcopy(value)


def plain(value: Any) -> Any:
    """``value`` as ``dataclasses.asdict`` converts it (a command, to fingerprint it),
    without its generic walk."""
    return _plain(value)


def _values_of(names: tuple[str, ...]) -> Any:
    """A getter of the attributes ``names`` that gives them as a tuple."""
    if len(names) > 1:
        return attrgetter(*names)
    return lambda value: tuple(getattr(value, name) for name in names)


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
    fields["early_signals"] = tuple((name, payload) for name, payload in fields["early_signals"])
    activity = fields["activity"]
    fields["activity"] = None if activity is None else PendingActivity(**activity)
    return State(**fields)
