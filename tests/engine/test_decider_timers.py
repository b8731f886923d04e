"""The decider and time: reminders, escalation, wait and signal steps, stale inputs,
terminal states and conditions that fail at run time."""

from __future__ import annotations

import random
from typing import Any

import pytest

from templates_engine import (
    CANCELLED,
    COMPENSATING,
    COMPLETED,
    ROLLED_BACK,
    RUNNING,
    TIMEOUT,
    CommandRejected,
    Context,
    Definition,
    StaticDirectory,
    decide,
    errors,
    public_status,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition

DAY = 86_400.0
DIRECTORY = StaticDirectory(managers={"alice": "bob", "bob": "carol"}, users=frozenset({"zoe"}))
BOSS = {"manager": "submitter"}


def _engine(defn: Definition, clock: FakeClock, **activities: Any) -> InMemoryEngine:
    return InMemoryEngine(defn, activities, clock, random.Random(9), DIRECTORY)


def _of(engine: InMemoryEngine, kind: type[ev.Event]) -> list[Any]:
    return [e for e in engine.events("wf") if isinstance(e, kind)]


def _decide(engine: InMemoryEngine, command: cmd.Command) -> list[ev.Event]:
    """What the decider answers now, without recording it."""
    ctx = Context(now=engine.clock.now(), directory=DIRECTORY)
    return decide(engine.definition, engine.state("wf"), command, ctx)


def _manager_step(**fields: Any) -> Definition:
    return definition(approval("manager", BOSS, reminders=["P1D"], deadline="P2D", **fields))


def test_a_reminder_goes_to_whoever_has_not_decided(clock: FakeClock) -> None:
    # given
    engine = _engine(_manager_step(), clock)
    engine.start("wf", {}, submitter="alice")
    clock.advance(DAY - 1)
    engine.run("wf")
    assert _of(engine, ev.ReminderSent) == []

    # when
    clock.advance(1)
    engine.run("wf")

    # then
    (reminder,) = _of(engine, ev.ReminderSent)
    assert reminder.users == ("bob",)
    assert engine.next_run_at("wf") == pytest.approx(1_000.0 + 2 * DAY)


def test_the_deadline_escalates_to_the_assignees_manager(clock: FakeClock) -> None:
    # given
    engine = _engine(_manager_step(), clock)
    engine.start("wf", {}, submitter="alice")
    assert engine.state("wf").due_at == pytest.approx(clock.now() + 2 * DAY)

    # when
    clock.advance(2 * DAY)
    engine.run("wf")

    # then
    (escalated,) = _of(engine, ev.Escalated)
    assert escalated.assignments == (ev.Assignment("carol", 0),)
    assert escalated.replace is True
    assert engine.state("wf").assignments == (ev.Assignment("carol", 0),)
    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", "bob", "approve", "rq-1")
    assert caught.value.code == errors.NOT_YOUR_STEP
    engine.decide("wf", "carol", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED


def test_escalation_can_add_beside_the_assignee(clock: FakeClock) -> None:
    engine = _engine(_manager_step(escalation="add"), clock)
    engine.start("wf", {}, submitter="alice")

    clock.advance(2 * DAY)
    engine.run("wf")

    assert {a.user for a in engine.state("wf").assignments} == {"bob", "carol"}
    engine.decide("wf", "bob", "approve", "rq-1")
    assert engine.status("wf") == COMPLETED


def test_a_decision_leaves_the_step_timers_stale(clock: FakeClock) -> None:
    # given
    defn = definition(approval("manager", BOSS, deadline="P2D"), approval("other", {"user": "zoe"}))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")
    (deadline,) = engine.state("wf").timers

    # when
    engine.decide("wf", "bob", "approve", "rq-1")

    # then
    assert deadline.key not in {t.key for t in engine.state("wf").timers}
    assert _decide(engine, cmd.TimerFired(deadline.key)) == []
    clock.advance(3 * DAY)
    engine.run("wf")
    assert _of(engine, ev.Escalated) == []
    assert public_status(engine.state("wf")) == "PENDING_OTHER"


def test_timer_keys_never_repeat_when_a_step_is_entered_again(clock: FakeClock) -> None:
    defn = definition(approval("manager", BOSS, deadline="P1D", send_back_to="submitter"))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")
    (first,) = engine.state("wf").timers
    engine.decide("wf", "bob", "send_back", "rq-1", comment="needs another look")

    engine.decide("wf", "alice", "approve", "rq-2")

    (second,) = engine.state("wf").timers
    assert second.key != first.key
    assert _decide(engine, cmd.TimerFired(first.key)) == []


def test_a_wait_step_sleeps_then_moves_on(clock: FakeClock) -> None:
    # given
    engine = _engine(definition({"id": "cool_off", "kind": "wait", "duration": "PT60S"}), clock)
    engine.start("wf", {})

    # when
    clock.advance(59)
    early = engine.run("wf")
    clock.advance(1)
    late = engine.run("wf")

    # then
    assert (early, late) == (RUNNING, COMPLETED)


def _signal_flow(timeout: str | None = "PT1H") -> Definition:
    step: dict[str, Any] = {"id": "erp", "kind": "signal", "signal": "erp-booked"}
    if timeout:
        step["timeout"] = timeout
    return definition(step)


def test_a_signal_payload_lands_in_the_data(clock: FakeClock) -> None:
    engine = _engine(_signal_flow(), clock)
    engine.start("wf", {"amountPaise": 1})

    engine.signal("wf", "erp-booked", {"voucher": "V-17"})

    assert engine.status("wf") == COMPLETED
    assert engine.state("wf").data["signals"] == {"erp-booked": {"voucher": "V-17"}}
    (received,) = _of(engine, ev.SignalReceived)
    assert received.step == "erp"


def test_a_signal_that_does_not_come_in_time_fails_the_step(clock: FakeClock) -> None:
    engine = _engine(_signal_flow(), clock)
    engine.start("wf", {})

    clock.advance(3_600)
    engine.run("wf")

    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.step, failed.error) == ("erp", TIMEOUT)
    assert engine.status("wf") == ROLLED_BACK
    assert _of(engine, ev.SignalReceived) == []


def test_a_signal_nobody_waits_for_is_kept_and_changes_nothing(clock: FakeClock) -> None:
    # given
    engine = _engine(_signal_flow(timeout=None), clock)
    engine.start("wf", {})
    before = engine.state("wf")

    # when
    engine.signal("wf", "something-else", {"x": 1})

    # then
    (received,) = _of(engine, ev.SignalReceived)
    assert (received.name, received.step, dict(received.payload)) == (
        "something-else",
        None,
        {"x": 1},
    )
    assert engine.state("wf") == before


def test_a_signal_during_an_approval_is_kept_and_the_task_stays(clock: FakeClock) -> None:
    engine = _engine(_manager_step(), clock)
    engine.start("wf", {}, submitter="alice")

    engine.signal("wf", "erp-booked", {})

    assert [e.step for e in _of(engine, ev.SignalReceived)] == [None]
    assert public_status(engine.state("wf")) == "PENDING_MANAGER"


@pytest.mark.parametrize(
    "command",
    [
        cmd.Decide("bob", "approve"),
        cmd.Signal("erp-booked"),
        cmd.Cancel("admin"),
        cmd.Reassign("admin", "bob", "zoe"),
    ],
    ids=lambda c: c.type,
)
def test_a_finished_workflow_refuses_commands(clock: FakeClock, command: cmd.Command) -> None:
    engine = _engine(_manager_step(), clock)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "rq-1")

    with pytest.raises(CommandRejected) as caught:
        _decide(engine, command)

    assert caught.value.code == errors.WORKFLOW_FINISHED


def test_stale_inputs_after_the_end_yield_no_events(clock: FakeClock) -> None:
    # given
    engine = _engine(definition(action("reserve", "reserve")), clock, reserve=lambda k, d: None)
    engine.start("wf", {})
    engine.run("wf")
    assert engine.status("wf") == COMPLETED

    # then
    assert _decide(engine, cmd.ActivityCompleted("reserve", 1)) == []
    assert _decide(engine, cmd.ActivityFailed("reserve", 1, "Boom")) == []
    assert _decide(engine, cmd.TimerFired("manager#1:deadline:0")) == []


def test_an_outcome_for_another_attempt_is_ignored(clock: FakeClock) -> None:
    defn = definition(action("reserve", "reserve"))
    engine = _engine(defn, clock, reserve=lambda k, d: None)
    engine.start("wf", {})

    assert _decide(engine, cmd.ActivityCompleted("reserve", 2)) == []
    assert _decide(engine, cmd.ActivityCompleted("reserve", 1, undo=True)) == []
    assert _decide(engine, cmd.ActivityFailed("reserve", 3, "Boom")) == []
    assert _decide(engine, cmd.ActivityCompleted("reserve", 1)) != []


def test_cancel_ends_the_workflow(clock: FakeClock) -> None:
    engine = _engine(_manager_step(), clock)
    engine.start("wf", {}, submitter="alice")

    events = _decide(engine, cmd.Cancel("admin", "duplicate request"))

    assert events == [ev.WorkflowCancelled("admin", "duplicate request")]


def test_a_condition_that_errors_at_run_time_fails_the_step(clock: FakeClock) -> None:
    # given
    defn = definition(
        action("reserve", "reserve", compensate="release"),
        approval("big", BOSS, when="data.amountPaise > 100"),
    )
    calls: list[str] = []
    engine = _engine(
        defn,
        clock,
        reserve=lambda k, d: calls.append("reserve"),
        release=lambda k, d: calls.append("release"),
    )

    # when
    engine.start("wf", {"note": "no amount"}, submitter="alice")
    engine.run("wf")

    # then
    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.step, failed.error) == ("big", "ConditionError")
    assert "amountPaise" in failed.message
    assert calls == ["reserve", "release"]
    assert engine.status("wf") == ROLLED_BACK


def test_a_condition_that_is_not_a_bool_fails_the_step(clock: FakeClock) -> None:
    engine = _engine(definition(approval("big", BOSS, when="data.amountPaise + 1")), clock)

    engine.start("wf", {"amountPaise": 5}, submitter="alice")

    (failed,) = _of(engine, ev.StepFailed)
    assert failed.error == "ConditionError"


def test_conditions_see_the_submitter(clock: FakeClock) -> None:
    defn = definition(approval("self_check", BOSS, when="submitter == 'alice'"))
    engine = _engine(defn, clock)

    engine.start("wf", {}, submitter="alice")
    assert public_status(engine.state("wf")) == "PENDING_SELF_CHECK"


def test_withdrawn_workflow_reads_cancelled(clock: FakeClock) -> None:
    engine = _engine(_manager_step(), clock)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "send_back", "rq-1", comment="needs another look")

    engine.decide("wf", "alice", "reject", "rq-2", comment="not needed")

    assert engine.status("wf") == CANCELLED
    assert engine.next_run_at("wf") is None


def test_cancel_undoes_completed_steps_before_ending_cancelled(clock: FakeClock) -> None:
    # given a reserved budget and a pending approval
    defn = definition(
        action("reserve", "reserve", compensate="release"),
        approval("finance", BOSS),
    )
    calls: list[str] = []
    engine = _engine(
        defn,
        clock,
        reserve=lambda k, d: calls.append("reserve"),
        release=lambda k, d: calls.append(f"release {k}"),
    )
    engine.start("wf", {}, submitter="alice")
    engine.run("wf")

    # when the workflow is cancelled
    assert engine.cancel("wf", "admin", "duplicate request") == COMPENSATING
    engine.run("wf")

    # then the reservation is released, and only then is it cancelled
    assert calls == ["reserve", "release wf/undo:reserve"]
    assert engine.status("wf") == CANCELLED
    assert engine.history("wf") == ["reserve:ok:1", "undo:reserve:ok:1"]


def test_cancel_while_undoing_is_refused(clock: FakeClock) -> None:
    defn = definition(action("reserve", "reserve", compensate="release"), approval("f", BOSS))
    engine = _engine(defn, clock, reserve=lambda k, d: None, release=lambda k, d: None)
    engine.start("wf", {}, submitter="alice")
    engine.run("wf")
    engine.cancel("wf", "admin", "first")

    with pytest.raises(CommandRejected) as refused:
        engine.cancel("wf", "admin", "second")

    assert refused.value.code == "ALREADY_TURNING_BACK"
