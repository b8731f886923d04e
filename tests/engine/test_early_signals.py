"""Signals are durable messages: one that arrives before a step waits for it is kept
and taken, in arrival order, when a step that waits for its name begins."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from templates_engine import (
    CANCELLED,
    COMPLETED,
    ROLLED_BACK,
    RUNNING,
    CommandRejected,
    Context,
    Definition,
    StaticDirectory,
    decide,
    errors,
    public_status,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.snapshot import state_from_dict, state_to_dict
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition, drive

DAY = 86_400.0
DIRECTORY = StaticDirectory(managers={"alice": "bob"}, groups={"finance": ["fiona"]})
SIGNED = "contract_signed"


def _contract() -> dict[str, Any]:
    return {"id": "contract", "kind": "signal", "signal": SIGNED, "timeout": "P7D"}


def _vendor_flow() -> Definition:
    """The manager approves, the contract is signed (within seven days), finance
    approves, and may send the request back to the manager."""
    return definition(
        approval("manager", {"manager": "submitter"}),
        _contract(),
        approval("finance", {"group": "finance"}, send_back_to="manager"),
    )


def _engine(clock: FakeClock, defn: Definition | None = None, **activities: Any) -> InMemoryEngine:
    engine = InMemoryEngine(defn or _vendor_flow(), activities, clock, random.Random(5), DIRECTORY)
    engine.start("wf", {}, submitter="alice")
    return engine


def _of(engine: InMemoryEngine, kind: type[ev.Event]) -> list[Any]:
    return [e for e in engine.events("wf") if isinstance(e, kind)]


def _since(engine: InMemoryEngine, count: int) -> list[type[ev.Event]]:
    return [type(e) for e in engine.events("wf")[count:]]


def test_an_early_signal_is_kept_and_taken_when_its_step_begins(clock: FakeClock) -> None:
    # given: the ERP signs while the manager has not yet approved
    engine = _engine(clock)
    engine.signal("wf", SIGNED, {"envelope": "E-1"})
    assert [(e.name, dict(e.payload)) for e in _of(engine, ev.SignalArrivedEarly)] == [
        (SIGNED, {"envelope": "E-1"})
    ]
    assert engine.state("wf").early_signals == ((SIGNED, {"envelope": "E-1"}),)
    assert public_status(engine.state("wf")) == "PENDING_MANAGER"
    before = len(engine.events("wf"))

    # when the manager approves, the contract step begins
    engine.decide("wf", "bob", "approve", "r1")

    # then it takes the early signal at once, sets no timeout, and finance is asked
    assert _since(engine, before) == [
        ev.DecisionRecorded,
        ev.StepCompleted,
        ev.SignalAwaited,
        ev.SignalReceived,
        ev.StepCompleted,
        ev.ApprovalRequested,
    ]
    (awaited,) = _of(engine, ev.SignalAwaited)
    assert awaited.timers == ()
    (received,) = _of(engine, ev.SignalReceived)
    assert (received.step, received.early, dict(received.payload)) == (
        "contract",
        True,
        {"envelope": "E-1"},
    )
    state = engine.state("wf")
    assert state.data["signals"] == {SIGNED: {"envelope": "E-1"}}
    assert state.early_signals == ()
    assert public_status(state) == "PENDING_FINANCE"


def test_an_early_signal_means_no_timeout_failure_later(clock: FakeClock) -> None:
    # given
    engine = _engine(clock)
    engine.signal("wf", SIGNED, {"envelope": "E-1"})
    engine.decide("wf", "bob", "approve", "r1")

    # when the contract step's timeout would have passed
    clock.advance(8 * DAY)
    engine.run("wf")

    # then nothing failed, and finance still decides
    assert _of(engine, ev.StepFailed) == []
    assert engine.decide("wf", "fiona", "approve", "r2") == COMPLETED


def test_a_signal_on_time_completes_the_step_as_before(clock: FakeClock) -> None:
    # given the contract step waits, with its timeout
    engine = _engine(clock)
    engine.decide("wf", "bob", "approve", "r1")
    (awaited,) = _of(engine, ev.SignalAwaited)
    assert [t.kind for t in awaited.timers] == ["signal_timeout"]

    # when
    engine.signal("wf", SIGNED, {"envelope": "E-1"})

    # then
    (received,) = _of(engine, ev.SignalReceived)
    assert (received.step, received.early) == ("contract", False)
    assert _of(engine, ev.SignalArrivedEarly) == []
    assert engine.state("wf").timers == ()  # the timeout went with the step
    assert public_status(engine.state("wf")) == "PENDING_FINANCE"


def test_of_two_early_signals_the_step_takes_the_first_and_keeps_the_second(
    clock: FakeClock,
) -> None:
    # given two early signals of the same name
    engine = _engine(clock)
    engine.signal("wf", SIGNED, {"envelope": "E-1"})
    engine.signal("wf", SIGNED, {"envelope": "E-2"})

    # when the step begins
    engine.decide("wf", "bob", "approve", "r1")

    # then it took the first; the second is recorded and kept, unused
    (received,) = _of(engine, ev.SignalReceived)
    assert dict(received.payload) == {"envelope": "E-1"}
    assert engine.state("wf").data["signals"] == {SIGNED: {"envelope": "E-1"}}
    assert len(_of(engine, ev.SignalArrivedEarly)) == 2
    assert engine.state("wf").early_signals == ((SIGNED, {"envelope": "E-2"}),)
    assert engine.decide("wf", "fiona", "approve", "r2") == COMPLETED


def test_a_second_signal_after_the_step_took_one_on_time_is_kept_and_unused(
    clock: FakeClock,
) -> None:
    # given the step took a signal on time
    engine = _engine(clock)
    engine.decide("wf", "bob", "approve", "r1")
    engine.signal("wf", SIGNED, {"envelope": "E-1"})

    # when the same signal comes again (a new request id)
    engine.signal("wf", SIGNED, {"envelope": "E-2"})

    # then the step's payload stands; the second is recorded, kept, and changes nothing
    assert [dict(e.payload) for e in _of(engine, ev.SignalReceived)] == [{"envelope": "E-1"}]
    assert [dict(e.payload) for e in _of(engine, ev.SignalArrivedEarly)] == [{"envelope": "E-2"}]
    state = engine.state("wf")
    assert state.data["signals"] == {SIGNED: {"envelope": "E-1"}}
    assert public_status(state) == "PENDING_FINANCE"
    assert engine.decide("wf", "fiona", "approve", "r2") == COMPLETED
    assert engine.state("wf").early_signals == ((SIGNED, {"envelope": "E-2"}),)


def test_a_signal_early_for_the_second_round_is_taken_when_the_step_begins_again(
    clock: FakeClock,
) -> None:
    # given round 1 took a signal on time, and finance sent the request back
    engine = _engine(clock)
    engine.decide("wf", "bob", "approve", "r1")
    engine.signal("wf", SIGNED, {"envelope": "E-1"})
    engine.decide("wf", "fiona", "send_back", "r2", comment="needs another look")
    assert public_status(engine.state("wf")) == "PENDING_MANAGER"

    # when the contract is signed again before the manager approves again
    engine.signal("wf", SIGNED, {"envelope": "E-2"})
    engine.decide("wf", "bob", "approve", "r3")

    # then the second round's contract step took it when it began
    received = _of(engine, ev.SignalReceived)
    assert [(dict(e.payload), e.early) for e in received] == [
        ({"envelope": "E-1"}, False),
        ({"envelope": "E-2"}, True),
    ]
    state = engine.state("wf")
    assert state.data["signals"] == {SIGNED: {"envelope": "E-2"}}
    assert state.early_signals == ()
    assert public_status(state) == "PENDING_FINANCE"
    clock.advance(8 * DAY)
    engine.run("wf")
    assert engine.decide("wf", "fiona", "approve", "r4") == COMPLETED


def test_a_kept_second_signal_is_taken_by_the_step_in_a_later_round(clock: FakeClock) -> None:
    # given two early signals; round 1 took the first
    engine = _engine(clock)
    engine.signal("wf", SIGNED, {"envelope": "E-1"})
    engine.signal("wf", SIGNED, {"envelope": "E-2"})
    engine.decide("wf", "bob", "approve", "r1")

    # when finance sends back and the manager approves again
    engine.decide("wf", "fiona", "send_back", "r2", comment="needs another look")
    engine.decide("wf", "bob", "approve", "r3")

    # then round 2 took the second, in arrival order
    assert [dict(e.payload) for e in _of(engine, ev.SignalReceived)] == [
        {"envelope": "E-1"},
        {"envelope": "E-2"},
    ]
    assert engine.state("wf").early_signals == ()
    assert public_status(engine.state("wf")) == "PENDING_FINANCE"


def test_early_signals_of_two_names_go_each_to_its_own_step(clock: FakeClock) -> None:
    # given two signal steps, and their signals arriving in the other order
    defn = definition(
        approval("manager", {"manager": "submitter"}),
        {"id": "signed", "kind": "signal", "signal": SIGNED},
        {"id": "paid", "kind": "signal", "signal": "deposit_paid"},
    )
    engine = _engine(clock, defn)
    engine.signal("wf", "deposit_paid", {"ref": "P-1"})
    engine.signal("wf", SIGNED, {"envelope": "E-1"})

    # when
    status = engine.decide("wf", "bob", "approve", "r1")

    # then
    assert status == COMPLETED
    assert [(e.step, e.name) for e in _of(engine, ev.SignalReceived)] == [
        ("signed", SIGNED),
        ("paid", "deposit_paid"),
    ]
    assert engine.state("wf").data["signals"] == {
        SIGNED: {"envelope": "E-1"},
        "deposit_paid": {"ref": "P-1"},
    }


def test_a_signal_no_step_waits_for_is_recorded_and_not_kept(clock: FakeClock) -> None:
    engine = _engine(clock)

    engine.signal("wf", "goods_received", {"x": 1})

    (received,) = _of(engine, ev.SignalReceived)
    assert (received.name, received.step, received.early) == ("goods_received", None, False)
    assert _of(engine, ev.SignalArrivedEarly) == []
    assert engine.state("wf").early_signals == ()


def test_a_signal_while_the_workflow_turns_back_is_recorded_and_not_kept(
    clock: FakeClock,
) -> None:
    # given a workflow undoing a step: its undo not yet run
    defn = definition(
        action("reserve", "reserve", compensate="release"),
        _contract(),
    )
    engine = _engine(clock, defn, reserve=lambda key, data: None, release=lambda k, d: None)
    engine.run("wf")  # reserve runs; the contract step waits
    engine.cancel("wf", "alice", "not needed")
    assert engine.state("wf").status != CANCELLED  # still undoing

    # when
    engine.signal("wf", SIGNED, {"envelope": "E-1"})

    # then no step will ever take it
    assert [e.step for e in _of(engine, ev.SignalReceived)] == [None]
    assert engine.state("wf").early_signals == ()
    assert drive(engine, "wf") == CANCELLED


def test_a_signal_for_a_finished_workflow_is_refused_even_with_a_kept_one(
    clock: FakeClock,
) -> None:
    # given a finished workflow holding a kept, unused signal
    engine = _engine(clock, definition(approval("manager", {"manager": "submitter"}), _contract()))
    engine.signal("wf", SIGNED, {"envelope": "E-1"})
    engine.signal("wf", SIGNED, {"envelope": "E-2"})
    assert engine.decide("wf", "bob", "approve", "r1") == COMPLETED

    # when / then
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    with pytest.raises(CommandRejected) as refused:
        decide(engine.definition, engine.state("wf"), cmd.Signal(SIGNED, {}), ctx)
    assert refused.value.code == errors.WORKFLOW_FINISHED


def test_a_history_with_early_signals_replays_and_snapshots_to_the_same_state(
    clock: FakeClock,
) -> None:
    # given a history holding a taken and a kept early signal
    engine = _engine(clock)
    engine.signal("wf", SIGNED, {"envelope": "E-1", "at": [1, 2]})
    engine.signal("wf", SIGNED, {"envelope": "E-2"})
    engine.decide("wf", "bob", "approve", "r1")
    stored = [json.loads(json.dumps(e.to_dict())) for e in engine.events("wf")]

    # when
    state = replay(engine.definition, [ev.event_from_dict(doc) for doc in stored])
    snapshot = state_from_dict(json.loads(json.dumps(state_to_dict(state))))

    # then
    assert state == engine.state("wf")
    assert snapshot == state
    assert state.early_signals == ((SIGNED, {"envelope": "E-2"}),)


HISTORIES = Path(__file__).parent / "histories"


def test_a_signal_recorded_early_before_signals_were_kept_stays_unused() -> None:
    # given a history written when an early signal was recorded and never delivered
    doc = json.loads((HISTORIES / "early_signal_before_it_was_kept.json").read_text())
    events = [ev.event_from_dict(e) for e in doc["events"]]

    # when
    state = replay(Definition.parse(doc["definition"]), events)

    # then it replays as it did: the signal is not kept, the step timed out
    (old,) = [e for e in events if isinstance(e, ev.SignalReceived)]
    assert (old.step, old.early) == (None, False)
    assert state.early_signals == ()
    assert state.status == ROLLED_BACK
    assert "signals" not in state.data


def test_a_signal_received_of_the_first_shape_reads_as_not_early() -> None:
    v1 = {"type": "SignalReceived", "v": 1, "name": SIGNED, "payload": {"a": 1}, "step": "c"}

    event = ev.event_from_dict(v1)

    assert event == ev.SignalReceived(SIGNED, {"a": 1}, "c", False)
    assert event.to_dict() == {**v1, "v": 2, "early": False}


def test_the_workflow_keeps_running_while_a_kept_signal_waits(clock: FakeClock) -> None:
    engine = _engine(clock)

    engine.signal("wf", SIGNED, {})

    assert engine.status("wf") == RUNNING
    assert engine.next_run_at("wf") is None  # nothing due: the manager decides
