"""Rounds: each entry into an action step is a new round, with its own idempotency key,
compensated once if it completed."""

from __future__ import annotations

import random
from typing import Any

from templates_engine import REJECTED, StaticDirectory, replay
from templates_engine import events as ev
from templates_engine.keys import activity_key
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition, drive

DIRECTORY = StaticDirectory(managers={"alice": "bob"}, groups={"finance": ["fiona"]})


class Calls:
    def __init__(self) -> None:
        self.keys: list[tuple[str, str]] = []

    def __call__(self, name: str) -> Any:
        def run(key: str, data: dict[str, Any]) -> None:
            self.keys.append((name, key))

        return run


def _send_back_engine(clock: FakeClock, calls: Calls) -> InMemoryEngine:
    defn = definition(
        approval("manager", {"manager": "submitter"}),
        action("reserve", "reserve", compensate="release"),
        approval("finance", {"group": "finance"}, send_back_to="manager"),
    )
    activities = {"reserve": calls("reserve"), "release": calls("release")}
    return InMemoryEngine(defn, activities, clock, random.Random(3), DIRECTORY)


def test_a_send_back_runs_a_new_round_and_a_rejection_undoes_each_round_once(
    clock: FakeClock,
) -> None:
    # given: reserve ran once, finance sent back to the manager, reserve ran again
    calls = Calls()
    engine = _send_back_engine(clock, calls)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "r1")
    drive(engine, "wf")
    engine.decide("wf", "fiona", "send_back", "r2", comment="needs another look")
    engine.decide("wf", "bob", "approve", "r3")
    drive(engine, "wf")

    # when
    engine.decide("wf", "fiona", "reject", "r4", comment="needs another look")
    status = drive(engine, "wf")

    # then: two rounds, two keys; each undone once, newest first, under its own key
    assert status == REJECTED
    assert engine.history("wf") == [
        "reserve:ok:1",
        "reserve#2:ok:1",
        "undo:reserve#2:ok:1",
        "undo:reserve:ok:1",
    ]
    assert calls.keys == [
        ("reserve", "wf/reserve"),
        ("reserve", "wf/reserve/2"),
        ("release", "wf/undo:reserve/2"),
        ("release", "wf/undo:reserve"),
    ]
    scheduled = [e for e in engine.events("wf") if isinstance(e, ev.ActivityScheduled)]
    assert [(e.step, e.round, e.undo) for e in scheduled] == [
        ("reserve", 1, False),
        ("reserve", 2, False),
        ("reserve", 2, True),
        ("reserve", 1, True),
    ]
    assert replay(engine.definition, engine.events("wf")) == engine.state("wf")


def test_the_compensation_stack_holds_each_completed_round_once(clock: FakeClock) -> None:
    calls = Calls()
    engine = _send_back_engine(clock, calls)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "r1")
    drive(engine, "wf")
    engine.decide("wf", "fiona", "send_back", "r2", comment="needs another look")
    engine.decide("wf", "bob", "approve", "r3")
    drive(engine, "wf")

    assert engine.state("wf").compensations == (("reserve", 1), ("reserve", 2))


def test_the_first_round_key_is_unchanged_and_later_rounds_carry_their_number() -> None:
    assert activity_key("wf-1", "reserve", False) == "wf-1/reserve"
    assert activity_key("wf-1", "reserve", True) == "wf-1/undo:reserve"
    assert activity_key("wf-1", "reserve", False, 1) == "wf-1/reserve"
    assert activity_key("wf-1", "reserve", False, 3) == "wf-1/reserve/3"
    assert activity_key("wf-1", "reserve", True, 2) == "wf-1/undo:reserve/2"


def test_a_history_from_before_rounds_with_a_step_run_twice_stacks_its_undo_once() -> None:
    # given: v1 events of the old bug: reserve ran in two entries, both read as round 1
    def scheduled(undo: bool = False) -> dict[str, Any]:
        return {
            "type": "ActivityScheduled",
            "v": 1,
            "step": "reserve",
            "activity": "reserve",
            "queue": "default",
            "attempt": 1,
            "not_before": 10.0,
            "timeout": 300.0,
            "undo": undo,
        }

    ran = [
        scheduled(),
        {"type": "ActivitySucceeded", "v": 1, "step": "reserve", "attempt": 1},
        {"type": "StepCompleted", "v": 1, "step": "reserve", "compensate": True},
    ]
    docs = [
        {
            "type": "WorkflowStarted",
            "v": 1,
            "workflow_type": "t",
            "definition_version": 1,
            "data": {},
            "submitter": "alice",
        },
        *ran,
        *ran,
    ]

    # when
    events = [ev.event_from_dict(d) for d in docs]
    state = replay(definition(action("reserve", "reserve", compensate="release")), events)

    # then: one completed round, undone once (its key is the one both calls used)
    assert state.compensations == (("reserve", 1),)
    assert [e.round for e in events if isinstance(e, ev.ActivityScheduled)] == [1, 1]
