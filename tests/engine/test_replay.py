"""Replay of recorded histories, and the stored shape of every event type.

The files under ``histories/`` are histories as a store keeps them:
``{"definition": {...}, "events": [...], "expected": {...}}``. A change to ``evolve``
or to an event's shape that would replay an old history differently fails here.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest

from templates_engine import (
    COMPLETED,
    Context,
    Definition,
    StaticDirectory,
    attempt_history,
    decide,
    evolve,
    public_status,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.snapshot import SNAPSHOT_VERSION, state_to_dict

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def test_there_are_recorded_histories() -> None:
    assert len(HISTORIES) >= 3


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_a_recorded_history_replays_to_its_recorded_state(path: Path) -> None:
    # given
    doc = _load(path)
    definition = Definition.parse(doc["definition"])
    expected = doc["expected"]

    # when
    events = [ev.event_from_dict(e) for e in doc["events"]]
    state = replay(definition, events)

    # then
    assert state.status == expected["status"]
    assert state.step == expected["step"]
    assert attempt_history(events) == expected["history"]
    assert public_status(state) == expected["public_status"]
    assert dict(state.data) == expected["data"]


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_a_recorded_history_reads_back_to_the_same_json(path: Path) -> None:
    stored = _load(path)["events"]

    for doc in stored:
        again = json.loads(json.dumps(ev.event_from_dict(doc).to_dict()))

        current = ev.EVENT_TYPES[doc["type"]].schema_version
        if doc["v"] == current:
            assert again == doc
        else:  # an older shape reads back upgraded, every field it had kept
            assert again["v"] == current
            assert {k: again[k] for k in doc if k != "v"} == {k: doc[k] for k in doc if k != "v"}
            assert ev.event_from_dict(again).to_dict() == again


def test_an_activity_scheduled_from_before_rounds_is_the_first_round_without_heartbeats() -> None:
    # given: the v1 shape, written before rounds and heartbeats
    v1 = {
        "type": "ActivityScheduled",
        "v": 1,
        "step": "reserve",
        "activity": "reserve_budget",
        "queue": "payments",
        "attempt": 2,
        "not_before": 1_764_000_002.5,
        "timeout": 30.0,
        "undo": True,
    }

    # when
    event = ev.event_from_dict(v1)

    # then
    assert event == ev.ActivityScheduled(
        "reserve", "reserve_budget", "payments", 2, 1_764_000_002.5, 30.0, True, 1, None, None
    )
    assert event.to_dict()["v"] == 2


def test_a_replayed_history_carries_on_where_it_stopped() -> None:
    # given: a history that ends waiting on finance after a resubmission
    doc = _load(next(p for p in HISTORIES if p.stem == "sent_back_and_resubmitted"))
    definition = Definition.parse(doc["definition"])
    state = replay(definition, [ev.event_from_dict(e) for e in doc["events"]])
    ctx = Context(now=2e9, rng=random.Random(0), directory=StaticDirectory())

    # when
    events = decide(definition, state, cmd.Decide("fiona", "approve"), ctx)

    # then
    assert [type(e) for e in events] == [
        ev.DecisionRecorded,
        ev.StepCompleted,
        ev.WorkflowCompleted,
    ]
    final = state
    for event in events:
        final = evolve(final, event)
    assert final.status == COMPLETED


def test_an_unknown_event_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event type 'StepTeleported'"):
        ev.event_from_dict({"type": "StepTeleported", "v": 1, "step": "a"})
    with pytest.raises(ValueError, match="unknown event type None"):
        ev.event_from_dict({"v": 1})


def test_an_event_from_newer_code_is_refused() -> None:
    with pytest.raises(ValueError, match="newer"):
        ev.event_from_dict({"type": "StepSkipped", "v": 2, "step": "a"})


def test_an_older_shape_is_upgraded_by_its_upcaster(monkeypatch: pytest.MonkeyPatch) -> None:
    # given: StepSkipped is now v2, whose v1 called the field "step_id"
    monkeypatch.setattr(ev.StepSkipped, "schema_version", 2)
    monkeypatch.setitem(ev.UPCASTERS, ("StepSkipped", 1), lambda p: {"step": p.pop("step_id"), **p})

    # when
    event = ev.event_from_dict({"type": "StepSkipped", "v": 1, "step_id": "manager"})

    # then
    assert event == ev.StepSkipped("manager")
    assert event.to_dict() == {"type": "StepSkipped", "v": 2, "step": "manager"}


def test_an_older_shape_without_an_upcaster_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ev.StepSkipped, "schema_version", 2)

    with pytest.raises(ValueError, match="no upcaster for StepSkipped v1"):
        ev.event_from_dict({"type": "StepSkipped", "v": 1, "step": "a"})


def test_an_event_without_a_version_is_read_as_version_one() -> None:
    assert ev.event_from_dict({"type": "StepSkipped", "step": "a"}) == ev.StepSkipped("a")


TIMER = ev.Timer("manager#1:deadline:0", "deadline", "manager", 1_764_172_800.0)
ASSIGNED = (ev.Assignment("dave", 0, "bob"), ev.Assignment("fiona", 1))
SAMPLES: list[ev.Event] = [
    ev.WorkflowStarted("expense-approval", 3, {"amountPaise": 5, "tags": ["a"]}, "alice"),
    ev.StepSkipped("vp"),
    ev.ApproversExcluded(
        "finance", (("fiona", "submitter"), ("victor", "already approved vp")), True
    ),
    ev.ApprovalRequested("manager", ASSIGNED, 2, "all", 1_764_172_800.0, (TIMER,)),
    ev.DecisionRecorded("manager", "dave", "approve", 0, "bob", "fine"),
    ev.TaskReassigned("manager", "bob", "zoe", "bob", "delegated", False, "away"),
    ev.TimerFired("manager", "manager#1:reminder:0", "reminder"),
    ev.ReminderSent("manager", "manager#1:reminder:0", ("bob", "fiona")),
    ev.Escalated("manager", TIMER.key, (ev.Assignment("carol", 0),), True),
    ev.StepCompleted("reserve", compensate=True),
    ev.SentBack("finance", None, (TIMER,)),
    ev.Resubmitted("alice", {"amountPaise": 7}, "fixed"),
    ev.ActivityScheduled("reserve", "reserve_budget", "payments", 2, 1_764_000_002.5, 30.0),
    ev.ActivityHeartbeat(
        "reserve",
        2,
        1_764_000_004.0,
        ev.Timer("reserve#2:heartbeat:2.1", "heartbeat", "reserve", 1_764_000_014.0),
        {"done": 40},
    ),
    ev.ActivitySucceeded("reserve", 2, False, {"ref": "R-1"}),
    ev.ActivityFailed("reserve", 1, "Unavailable", "503", True, 2.5),
    ev.WaitStarted("cool_off", (TIMER,)),
    ev.SignalAwaited("erp", "erp-booked", (TIMER,)),
    ev.SignalReceived("erp-booked", {"voucher": "V-1"}, None),
    ev.SignalReceived("erp-booked", {"voucher": "V-2"}, "erp", early=True),
    ev.SignalArrivedEarly("erp-booked", {"voucher": "V-2"}),
    ev.StepFailed("book", "VendorBlocked", "blocked"),
    ev.CompensationStarted("REJECTED", "rejected by bob on manager"),
    ev.WorkflowCompleted(),
    ev.WorkflowRejected(),
    ev.WorkflowRolledBack(),
    ev.CompensationFailed("reserve"),
    ev.WorkflowCancelled(None, "withdrawn"),
    ev.StepRetried("olga", "the ERP is back", "book", "reserve"),
    ev.CompensationRetried("olga", "release fixed", "reserve"),
    ev.CompensationResolved("olga", "released by hand", "reserve", "ROLLED_BACK"),
    ev.TimerRearmed("olga", "mail server back", "manager#1:deadline:0"),
    ev.FileAttached("alice", "ab" * 32, "receipt.pdf", 120_000, "application/pdf"),
    ev.WorkflowRestarted("olga", "booking is back", "book", "6f1c0c9e-2b7e-4c1a-9d0e-1a2b3c4d5e6f"),
    ev.UndoRetried("olga", "release fixed", "reserve"),
    ev.CompensationSettled("olga", "released by hand", "reserve", "ROLLED_BACK"),
    ev.CompensationSettled(None, "the undo succeeded when retried", "reserve", "REJECTED", False),
    ev.CommentAdded("bob", "Is the hotel bill attached? @farah", ("farah",)),
    ev.ApproverAdded("manager", "carol", "olga", "bob left", (ev.Assignment("carol", 0),)),
]


def test_there_is_a_sample_of_every_event_type() -> None:
    assert {type(e) for e in SAMPLES} == set(ev.EVENT_TYPES.values())


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_every_event_type_round_trips_through_json(event: ev.Event) -> None:
    # when
    stored = json.loads(json.dumps(event.to_dict()))
    again = ev.event_from_dict(stored)

    # then
    assert stored["type"] == event.type
    assert stored["v"] == event.schema_version
    assert again == event
    assert type(again) is type(event)


def test_a_replayed_send_back_history_enters_the_next_round() -> None:
    # given: the recorded send-back history, cut where the manager is asked again
    doc = _load(next(p for p in HISTORIES if p.stem == "sent_back_to_manager_and_rejected"))
    definition = Definition.parse(doc["definition"])
    events = [ev.event_from_dict(e) for e in doc["events"]]
    cut = next(i for i, e in enumerate(events) if isinstance(e, ev.SentBack)) + 2
    state = replay(definition, events[:cut])
    ctx = Context(now=2e9, rng=random.Random(0), directory=StaticDirectory())

    # when
    new = decide(definition, state, cmd.Decide("bob", "approve"), ctx)

    # then: the action step is entered again, as round 2, over a stack holding round 1
    assert state.compensations == (("reserve", 1),)
    scheduled = [e for e in new if isinstance(e, ev.ActivityScheduled)]
    assert [(e.step, e.round, e.attempt) for e in scheduled] == [("reserve", 2, 1)]


def test_the_recorded_send_back_history_undid_each_round_once_newest_first() -> None:
    doc = _load(next(p for p in HISTORIES if p.stem == "sent_back_to_manager_and_rejected"))
    events = [ev.event_from_dict(e) for e in doc["events"]]

    undos = [e for e in events if isinstance(e, ev.ActivityScheduled) and e.undo]

    assert [(e.step, e.round) for e in undos] == [("reserve", 2), ("reserve", 1)]
    assert replay(Definition.parse(doc["definition"]), events).compensations == ()


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.stem)
def test_every_state_along_a_history_snapshots_as_asdict_would(path: Path) -> None:
    """``state_to_dict`` walks the state by hand; it gives what ``dataclasses.asdict``
    gives, tuples kept as tuples, for every state a recorded history passes through."""
    doc = _load(path)
    state = replay(Definition.parse(doc["definition"]), ())
    nested = {"lines": [{"amount": 1, "tags": ["a"]}], "limits": (1, 2)}
    for stored in doc["events"]:
        state = evolve(state, ev.event_from_dict(stored))
        for probe in (state, dataclasses.replace(state, data={**state.data, **nested})):
            got = state_to_dict(probe)
            assert got == {**dataclasses.asdict(probe), "snapshot_version": SNAPSHOT_VERSION}
            assert _types(got) == _types(dataclasses.asdict(probe) | {"snapshot_version": 0})
            assert got["data"] is not probe.data  # a copy, as asdict makes


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_types(v) for v in value])
    return type(value).__name__
