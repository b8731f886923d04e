"""An admin's operations on a workflow that needs a person: record a rolled-back
workflow's restart as a new one, retry a failed undo, settle it by hand, deliver a
parked timer again. Each leaves an event with who and why, refuses the wrong status
with nothing changed, never moves a terminal status, and replays."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest

from templates_engine import (
    CANCELLED,
    COMPENSATION_FAILED,
    COMPLETED,
    REJECTED,
    ROLLED_BACK,
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


def test_a_restart_records_the_new_workflow_and_the_old_one_stays_rolled_back(clock):
    engine = _engine(clock, book=Flaky())
    engine.start("wf", {}, submitter="alice")
    assert drive(engine, "wf") == ROLLED_BACK  # book failed twice; reserve was undone
    before = engine.state("wf")

    status = engine.operate("wf", cmd.RetryStep("olga", "the booking system is back", "wf-2"))

    assert status == ROLLED_BACK
    assert engine.events("wf")[-1] == ev.WorkflowRestarted(
        "olga", "the booking system is back", "book", "wf-2"
    )
    assert engine.state("wf").restarted_as == "wf-2"
    assert engine.next_run_at("wf") is None and engine.state("wf").activity is None
    assert engine.state("wf").timers == before.timers == ()
    _replays(engine, "wf")


def test_a_workflow_is_restarted_once(clock):
    engine = _engine(clock, book=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")
    engine.operate("wf", cmd.RetryStep("olga", "back", "wf-2"))
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match="already started again as wf-2"):
        engine.operate("wf", cmd.RetryStep("olga", "again", "wf-3"))
    assert engine.events("wf") == before


def test_a_retried_undo_runs_on_the_finished_workflow_and_settles_it(clock):
    release = Flaky()
    engine = _engine(clock, release=release, book=Flaky())
    engine.start("wf", {}, submitter="alice")
    assert drive(engine, "wf") == COMPENSATION_FAILED
    attempts = release.calls

    release.down = False
    assert engine.operate("wf", cmd.RetryCompensation("olga", "release fixed")) == (
        COMPENSATION_FAILED
    )
    assert drive(engine, "wf") == COMPENSATION_FAILED

    assert release.calls == attempts + 1
    assert engine.history("wf")[-1] == f"undo:reserve:ok:{attempts + 1}"
    assert engine.events("wf")[-1] == ev.CompensationSettled(
        None, "the undo succeeded when retried", "reserve", ROLLED_BACK, by_hand=False
    )
    assert engine.state("wf").settled
    _replays(engine, "wf")


def test_a_retried_undo_that_fails_again_is_left_for_a_person(clock):
    release = Flaky()
    engine = _engine(clock, release=release, book=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")
    attempts = release.calls

    engine.operate("wf", cmd.RetryCompensation("olga", "try once more"))
    assert drive(engine, "wf") == COMPENSATION_FAILED

    assert release.calls == attempts + 1  # one attempt: no automatic retries
    assert not engine.state("wf").settled
    assert engine.state("wf").activity is None
    # and a person may retry again, or settle it by hand
    release.down = False
    engine.operate("wf", cmd.RetryCompensation("olga", "fixed now"))
    drive(engine, "wf")
    assert engine.history("wf")[-1] == f"undo:reserve:ok:{attempts + 2}"
    assert engine.state("wf").settled
    _replays(engine, "wf")


def test_a_failed_undo_settled_by_hand_keeps_its_status_and_says_who_and_why(clock):
    engine = _engine(clock, release=Flaky(), book=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")

    status = engine.operate("wf", cmd.ResolveByHand("olga", "released in the ERP by hand"))

    assert status == COMPENSATION_FAILED
    (settled,) = [e for e in engine.events("wf") if isinstance(e, ev.CompensationSettled)]
    assert settled == ev.CompensationSettled(
        "olga", "released in the ERP by hand", "reserve", ROLLED_BACK
    )
    assert engine.state("wf").compensations == ()
    assert engine.state("wf").settled
    _replays(engine, "wf")


def test_a_settled_failure_is_not_settled_or_retried_again(clock):
    engine = _engine(clock, release=Flaky(), book=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")
    engine.operate("wf", cmd.ResolveByHand("olga", "done by hand"))
    before = engine.events("wf")

    for command in (cmd.ResolveByHand("olga", "again"), cmd.RetryCompensation("olga", "again")):
        with pytest.raises(CommandRejected, match="already been settled"):
            engine.operate("wf", command)
    assert engine.events("wf") == before


def test_a_cancelled_workflow_whose_undo_failed_records_the_cancel_as_its_outcome(clock):
    engine = _engine(clock, release=Flaky())
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")  # waiting on bob, reserve done
    engine.cancel("wf", "alice", "not needed")
    assert drive(engine, "wf") == COMPENSATION_FAILED
    assert engine.operate("wf", cmd.ResolveByHand("olga", "done by hand")) == (COMPENSATION_FAILED)
    assert engine.events("wf")[-1].outcome == CANCELLED


def _finished(clock: FakeClock, status: str) -> InMemoryEngine:
    """A workflow ended in ``status``."""
    if status == ROLLED_BACK:
        engine = _engine(clock, book=Flaky())
    elif status == COMPENSATION_FAILED:
        engine = _engine(clock, release=Flaky(), book=Flaky())
    else:
        engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")
    drive(engine, "wf")
    if status == COMPLETED:
        engine.decide("wf", "bob", "approve", "r1")
    elif status == REJECTED:
        engine.decide("wf", "bob", "reject", "r1", comment="needs another look")
    elif status == CANCELLED:
        engine.cancel("wf", "alice", "not needed")
    drive(engine, "wf")
    assert engine.status("wf") == status
    return engine


TERMINAL_STATUSES = (COMPLETED, REJECTED, ROLLED_BACK, COMPENSATION_FAILED, CANCELLED)


@pytest.mark.parametrize("status", TERMINAL_STATUSES)
@pytest.mark.parametrize(
    "command",
    [
        cmd.RetryStep("olga", "why", "wf-2"),
        cmd.RetryCompensation("olga", "why"),
        cmd.ResolveByHand("olga", "why"),
        cmd.RearmTimer("olga", "any", "why"),
    ],
    ids=["restart", "retry-undo", "settle", "rearm"],
)
def test_no_operation_changes_a_terminal_status(clock, status, command):
    engine = _finished(clock, status)

    with contextlib.suppress(CommandRejected):  # refused or recorded: either way
        engine.operate("wf", command)
    drive(engine, "wf")

    assert engine.status("wf") == status
    _replays(engine, "wf")


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (cmd.RetryStep("olga", "why", "wf-2"), "rolled back after a step failed"),
        (cmd.RetryCompensation("olga", "why"), "whose undo failed"),
        (cmd.ResolveByHand("olga", "why"), "whose undo failed"),
        (cmd.RearmTimer("olga", "nope", "why"), "no pending timer 'nope'"),
        (cmd.RetryStep("olga", "  ", "wf-2"), "say why"),
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
    engine.decide("wf", "bob", "reject", "r1", comment="needs another look")
    assert drive(engine, "wf") == REJECTED
    with pytest.raises(CommandRejected, match="rolled back after a step failed"):
        engine.operate("wf", cmd.RetryStep("olga", "again", "wf-2"))


def test_a_pending_timer_can_be_rearmed_with_an_event_and_no_change_of_state(clock):
    defn = definition(approval("manager", {"manager": "submitter"}, deadline="P1D"))
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), DIRECTORY)
    engine.start("wf", {}, submitter="alice")
    state = engine.state("wf")
    (timer,) = state.timers

    engine.operate("wf", cmd.RearmTimer("olga", timer.key, "the mail server is back"))

    assert engine.events("wf")[-1] == ev.TimerRearmed("olga", "the mail server is back", timer.key)
    assert engine.state("wf") == state
