"""An admin's operations on a workflow that needs a person: retry a step that failed
for good, retry a failed undo, settle it by hand, deliver a parked timer again. Each
leaves an event with who and why, refuses the wrong status with nothing changed, and
replays."""

from __future__ import annotations

import random
from typing import Any

import pytest

from templates_engine import (
    CANCELLED,
    COMPENSATING,
    COMPENSATION_FAILED,
    COMPLETED,
    REJECTED,
    ROLLED_BACK,
    RUNNING,
    CommandRejected,
    StaticDirectory,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.events import event_from_dict
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition, drive

DIRECTORY = StaticDirectory(managers={"alice": "bob"})


class Flaky:
    """An activity failing while ``down``."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    def __call__(self, key: str, data: dict[str, Any]) -> None:
        self.calls += 1
        if self.down:
            raise ConnectionError("down")


def _engine(clock: FakeClock, **activities: Any) -> InMemoryEngine:
    defn = definition(
        action("reserve", "reserve", compensate="release", retry={"max_attempts": 2}),
        action("book", "book", retry={"max_attempts": 2}),
        approval("manager", {"manager": "submitter"}),
    )
    ok = lambda key, data: None  # noqa: E731
    acts = {"reserve": ok, "release": ok, "book": ok, **activities}
    return InMemoryEngine(defn, acts, clock, random.Random(1), DIRECTORY)


def _replays(engine: InMemoryEngine, wid: str) -> None:
    stored = [event_from_dict(e.to_dict()) for e in engine.events(wid)]
    assert replay(engine.definition, stored) == engine.state(wid)


def test_a_step_that_failed_for_good_runs_again_from_the_first_undone_step(clock):
    book = Flaky()
    engine = _engine(clock, book=book)
    engine.start("wf", {}, submitter="alice")
    assert drive(engine, "wf") == ROLLED_BACK  # book failed twice; reserve was undone

    book.down = False
    status = engine.operate("wf", cmd.RetryStep("olga", "the booking system is back"))
    assert status == RUNNING
    assert drive(engine, "wf") == RUNNING  # reserve and book ran again; waiting on bob

    retried = [e for e in engine.events("wf") if isinstance(e, ev.StepRetried)]
    assert retried == [ev.StepRetried("olga", "the booking system is back", "book", "reserve")]
    assert engine.history("wf")[-2:] == ["reserve#2:ok:1", "book#2:ok:1"]
    engine.decide("wf", "bob", "approve", "r1")
    assert engine.status("wf") == COMPLETED
    _replays(engine, "wf")


def test_a_failed_undo_can_be_retried_and_goes_on_counting_attempts(clock):
    release = Flaky()
    engine = _engine(clock, release=release, book=Flaky())
    engine.start("wf", {}, submitter="alice")
    assert drive(engine, "wf") == COMPENSATION_FAILED
    attempts = release.calls

    release.down = False
    assert engine.operate("wf", cmd.RetryCompensation("olga", "release fixed")) == COMPENSATING
    assert drive(engine, "wf") == ROLLED_BACK
    assert release.calls == attempts + 1
    assert engine.history("wf")[-1] == f"undo:reserve:ok:{attempts + 1}"
    _replays(engine, "wf")


def test_a_failed_undo_settled_by_hand_ends_as_the_compensation_would_have(clock):
    engine = _engine(clock, release=Flaky(), book=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")

    status = engine.operate("wf", cmd.ResolveByHand("olga", "released in the ERP by hand"))

    assert status == ROLLED_BACK
    (settled,) = [e for e in engine.events("wf") if isinstance(e, ev.CompensationResolved)]
    assert settled == ev.CompensationResolved(
        "olga", "released in the ERP by hand", "reserve", ROLLED_BACK
    )
    assert engine.state("wf").compensations == ()
    _replays(engine, "wf")


def test_a_cancelled_workflow_whose_undo_failed_settles_cancelled(clock):
    engine = _engine(clock, release=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")  # waiting on bob, reserve done
    engine.cancel("wf", "alice", "not needed")
    assert drive(engine, "wf") == COMPENSATION_FAILED
    assert engine.operate("wf", cmd.ResolveByHand("olga", "done by hand")) == CANCELLED


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (cmd.RetryStep("olga", "why"), "rolled back after a step failed"),
        (cmd.RetryCompensation("olga", "why"), "whose undo failed"),
        (cmd.ResolveByHand("olga", "why"), "whose undo failed"),
        (cmd.RearmTimer("olga", "nope", "why"), "no pending timer 'nope'"),
        (cmd.RetryStep("olga", "  "), "say why"),
    ],
    ids=["retry-step", "retry-undo", "resolve", "rearm-unknown", "no-reason"],
)
def test_an_operation_on_the_wrong_status_is_refused_and_changes_nothing(clock, command, problem):
    engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")  # running, waiting on bob
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match=problem):
        engine.operate("wf", command)
    assert engine.events("wf") == before


def test_a_rejected_workflow_is_not_retried(clock):
    engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")
    engine.decide("wf", "bob", "reject", "r1")
    assert drive(engine, "wf") == REJECTED
    with pytest.raises(CommandRejected, match="rolled back after a step failed"):
        engine.operate("wf", cmd.RetryStep("olga", "again"))


def test_a_pending_timer_can_be_rearmed_with_an_event_and_no_change_of_state(clock):
    defn = definition(approval("manager", {"manager": "submitter"}, deadline="P1D"))
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), DIRECTORY)
    engine.start("wf", {}, submitter="alice")
    state = engine.state("wf")
    (timer,) = state.timers

    engine.operate("wf", cmd.RearmTimer("olga", timer.key, "the mail server is back"))

    assert engine.events("wf")[-1] == ev.TimerRearmed("olga", "the mail server is back", timer.key)
    assert engine.state("wf") == state
