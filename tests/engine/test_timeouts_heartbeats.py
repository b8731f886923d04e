"""Attempt timeouts and heartbeats, in the in-memory driver with the fake clock, and
the decider's heartbeat lease."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from templates_engine import (
    COMPLETED,
    HEARTBEAT_TIMEOUT,
    ROLLED_BACK,
    TIMEOUT,
    Context,
    Definition,
    DefinitionError,
    State,
    evolve,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.decider import decide
from templates_engine.snapshot import state_from_dict, state_to_dict
from templates_engine.testing import ActivityContext, FakeClock, InMemoryEngine

from .support import action, definition, drive

NO_JITTER = {"initial_interval": 1, "jitter": False, "max_attempts": 3}


def _engine(clock: FakeClock, fn: Any, **fields: Any) -> InMemoryEngine:
    fields.setdefault("retry", NO_JITTER)
    defn = definition(action("work", "work", **fields))
    return InMemoryEngine(defn, {"work": fn}, clock, random.Random(1))


def _of(engine: InMemoryEngine, kind: type[ev.Event]) -> list[Any]:
    return [e for e in engine.events("wf") if isinstance(e, kind)]


def _replays(engine: InMemoryEngine) -> bool:
    return replay(engine.definition, engine.events("wf")) == engine.state("wf")


# -- timeouts -------------------------------------------------------------------------


def test_an_attempt_over_its_timeout_fails_with_timeout_and_is_retried(clock: FakeClock) -> None:
    # given: the first attempt works 50 ms under a 10 ms timeout, the second 5 ms
    durations = [0.05, 0.005]

    def work(ctx: ActivityContext) -> dict[str, int]:
        ctx.sleep(durations[ctx.attempt - 1])
        return {"attempt": ctx.attempt}

    engine = _engine(clock, work, timeout=0.01)
    engine.start("wf", {})
    started = clock.now()

    # when
    status = drive(engine, "wf")

    # then: the late result is dropped; the timeout is a failure like any other
    assert status == COMPLETED
    assert engine.history("wf") == ["work:error:1", "work:ok:2"]
    failure = _of(engine, ev.ActivityFailed)[0]
    assert (failure.error, failure.retry_delay) == (TIMEOUT, 1.0)
    assert _of(engine, ev.ActivityScheduled)[1].not_before == pytest.approx(started + 0.01 + 1.0)
    assert engine.state("wf").data["results"] == {"work": {"attempt": 2}}
    assert _replays(engine)


def test_an_attempt_that_ends_on_its_timeout_is_in_time(clock: FakeClock) -> None:
    engine = _engine(clock, lambda ctx: ctx.sleep(30), timeout="PT30S")
    engine.start("wf", {})

    assert drive(engine, "wf") == COMPLETED
    assert engine.history("wf") == ["work:ok:1"]


def test_a_timeout_listed_as_non_retryable_fails_the_step_at_once(clock: FakeClock) -> None:
    # given
    engine = _engine(
        clock,
        lambda ctx: ctx.sleep(2),
        timeout=1,
        retry={"max_attempts": 5, "non_retryable": ["Timeout"]},
    )
    engine.start("wf", {})

    # when
    status = drive(engine, "wf")

    # then
    assert status == ROLLED_BACK
    assert engine.history("wf") == ["work:error:1"]
    assert [(e.step, e.error) for e in _of(engine, ev.StepFailed)] == [("work", TIMEOUT)]
    assert _replays(engine)


def test_timeouts_use_up_the_attempts_like_any_error(clock: FakeClock) -> None:
    engine = _engine(clock, lambda ctx: ctx.sleep(2), timeout=1)
    engine.start("wf", {})

    assert drive(engine, "wf") == ROLLED_BACK
    assert engine.history("wf") == ["work:error:1", "work:error:2", "work:error:3"]
    assert {e.error for e in _of(engine, ev.ActivityFailed)} == {TIMEOUT}


def test_an_activity_of_the_old_convention_is_timed_by_the_clock_it_moves(
    clock: FakeClock,
) -> None:
    # given: fn(key, data), which moves the shared clock itself
    keys: list[str] = []

    def work(key: str, data: dict[str, Any]) -> None:
        keys.append(key)
        clock.advance(5 if len(keys) == 1 else 0)

    engine = _engine(clock, work, timeout=3)
    engine.start("wf", {})

    # when
    status = drive(engine, "wf")

    # then
    assert status == COMPLETED
    assert engine.history("wf") == ["work:error:1", "work:ok:2"]
    assert keys == ["wf/work", "wf/work"]


def test_a_compensation_attempt_is_bounded_by_its_own_timeout(clock: FakeClock) -> None:
    # given: the undo of "book" takes too long on its first try
    undo_calls: list[int] = []

    def unbook(ctx: ActivityContext) -> None:
        undo_calls.append(ctx.attempt)
        ctx.sleep(10 if ctx.attempt == 1 else 1)

    def fail(ctx: ActivityContext) -> None:
        raise RuntimeError("no")

    defn = definition(
        action("book", "book", compensate={"activity": "unbook", "timeout": 5, "retry": NO_JITTER}),
        action("pay", "pay", retry={"max_attempts": 1}),
    )
    engine = InMemoryEngine(
        defn, {"book": lambda k, d: None, "unbook": unbook, "pay": fail}, clock, random.Random(1)
    )
    engine.start("wf", {})

    # when
    status = drive(engine, "wf")

    # then
    assert status == ROLLED_BACK
    assert engine.history("wf") == [
        "book:ok:1",
        "pay:error:1",
        "undo:book:error:1",
        "undo:book:ok:2",
    ]
    assert undo_calls == [1, 2]


# -- heartbeats -----------------------------------------------------------------------


def test_an_activity_that_heartbeats_lives_past_its_heartbeat_timeout(clock: FakeClock) -> None:
    # given: a 60 s job beating every 5 s under a 10 s heartbeat timeout
    def work(ctx: ActivityContext) -> str:
        for done in range(12):
            ctx.sleep(5)
            ctx.heartbeat({"done": done + 1})
        return "done"

    engine = _engine(clock, work, timeout=100, heartbeat_timeout=10)
    engine.start("wf", {})

    # when
    status = drive(engine, "wf")

    # then: one attempt; each beat moved the lease; no timer is left behind
    assert status == COMPLETED
    assert engine.history("wf") == ["work:ok:1"]
    beats = _of(engine, ev.ActivityHeartbeat)
    assert len(beats) == 13  # the start, then twelve
    assert [b.timer.fire_at - b.at for b in beats] == [10.0] * 13
    assert len({b.timer.key for b in beats}) == 13
    assert engine.state("wf").timers == ()
    assert engine.state("wf").heartbeat is None
    assert _replays(engine)


def test_an_attempt_whose_heartbeats_stop_fails_after_the_heartbeat_timeout_and_resumes(
    clock: FakeClock,
) -> None:
    # given: the first attempt beats twice, then hangs; the second resumes from its details
    seen: list[Any] = []

    def work(ctx: ActivityContext) -> dict[str, Any]:
        seen.append(ctx.last_heartbeat_details)
        if ctx.attempt == 1:
            ctx.sleep(5)
            ctx.heartbeat({"rows": 100})
            ctx.sleep(5)
            ctx.heartbeat({"rows": 200})
            ctx.sleep(50)  # hangs: no heartbeat for 50 s
            ctx.heartbeat({"rows": 999})  # too late: the attempt was given up
            return {"rows": 999}
        ctx.heartbeat()
        return {"resumed_from": ctx.last_heartbeat_details}

    engine = _engine(clock, work, timeout="PT30M", heartbeat_timeout="PT10S")
    engine.start("wf", {})
    started = clock.now()

    # when
    status = drive(engine, "wf")

    # then: failed 10 s after the last beat, not after 30 minutes; retried per policy
    assert status == COMPLETED
    assert engine.history("wf") == ["work:error:1", "work:ok:2"]
    failure = _of(engine, ev.ActivityFailed)[0]
    assert failure.error == HEARTBEAT_TIMEOUT
    retry = _of(engine, ev.ActivityScheduled)[1]
    assert retry.not_before == pytest.approx(started + 20 + 1)
    assert retry.heartbeat_details == {"rows": 200}
    assert seen == [None, {"rows": 200}]
    assert engine.state("wf").data["results"] == {"work": {"resumed_from": {"rows": 200}}}
    # each attempt's start is its first beat; the beat after the hang was lost
    assert [(b.attempt, b.details) for b in _of(engine, ev.ActivityHeartbeat)] == [
        (1, None),
        (1, {"rows": 100}),
        (1, {"rows": 200}),
        (2, None),
        (2, None),
    ]
    assert _replays(engine)


def test_an_attempt_that_never_beats_after_its_start_fails_after_the_heartbeat_timeout(
    clock: FakeClock,
) -> None:
    engine = _engine(
        clock,
        lambda ctx: ctx.sleep(100),
        timeout=1000,
        heartbeat_timeout=10,
        retry={"max_attempts": 2, "jitter": False},
    )
    engine.start("wf", {})
    started = clock.now()

    assert drive(engine, "wf") == ROLLED_BACK
    assert engine.history("wf") == ["work:error:1", "work:error:2"]
    assert {e.error for e in _of(engine, ev.ActivityFailed)} == {HEARTBEAT_TIMEOUT}
    assert _of(engine, ev.ActivityScheduled)[1].not_before == pytest.approx(started + 10 + 1)


def test_a_heartbeat_timeout_listed_as_non_retryable_fails_the_step_at_once(
    clock: FakeClock,
) -> None:
    engine = _engine(
        clock,
        lambda ctx: ctx.sleep(100),
        timeout=1000,
        heartbeat_timeout=10,
        retry={"non_retryable": ["HeartbeatTimeout"]},
    )
    engine.start("wf", {})

    assert drive(engine, "wf") == ROLLED_BACK
    assert engine.history("wf") == ["work:error:1"]
    assert [e.error for e in _of(engine, ev.StepFailed)] == [HEARTBEAT_TIMEOUT]


def test_the_step_timeout_still_bounds_a_heartbeating_attempt(clock: FakeClock) -> None:
    def work(ctx: ActivityContext) -> None:
        for _ in range(10):
            ctx.sleep(4)
            ctx.heartbeat()

    engine = _engine(clock, work, timeout=20, heartbeat_timeout=5, retry={"max_attempts": 1})
    engine.start("wf", {})

    assert drive(engine, "wf") == ROLLED_BACK
    assert [e.error for e in _of(engine, ev.ActivityFailed)] == [TIMEOUT]
    assert all(b.at <= clock.now() for b in _of(engine, ev.ActivityHeartbeat))
    assert len(_of(engine, ev.ActivityHeartbeat)) == 6  # the start and the beats up to 20 s


def test_details_without_a_heartbeat_timeout_still_reach_the_next_attempt(
    clock: FakeClock,
) -> None:
    seen: list[Any] = []

    def work(ctx: ActivityContext) -> None:
        seen.append(ctx.last_heartbeat_details)
        if ctx.attempt == 1:
            ctx.heartbeat()  # nothing to keep: not recorded
            ctx.heartbeat({"page": 3})
            raise ConnectionError("dropped")

    engine = _engine(clock, work)
    engine.start("wf", {})

    assert drive(engine, "wf") == COMPLETED
    assert seen == [None, {"page": 3}]
    beats = _of(engine, ev.ActivityHeartbeat)
    assert [(b.details, b.timer) for b in beats] == [({"page": 3}, None)]
    assert _replays(engine)


# -- the decider's lease --------------------------------------------------------------


def _apply(
    defn: Definition, state: State, command: cmd.Command, now: float
) -> tuple[State, list[Any]]:
    events = decide(defn, state, command, Context(now=now))
    for e in events:
        state = evolve(state, e)
    return state, events


def _running(**fields: Any) -> tuple[Definition, State]:
    """A workflow whose one action step's first attempt is due since 100."""
    defn = definition(action("work", "work", **fields))
    state, _ = _apply(defn, State(), cmd.Start({}), 100.0)
    return defn, state


def test_a_heartbeat_moves_the_attempts_timer_and_the_old_timer_firing_is_stale() -> None:
    # given
    defn, state = _running(timeout=300, heartbeat_timeout=30)

    # when
    state, first = _apply(defn, state, cmd.Heartbeat("work", 1), 110.0)
    state, second = _apply(defn, state, cmd.Heartbeat("work", 1, {"n": 1}), 125.0)
    state, stale = _apply(defn, state, cmd.TimerFired(first[0].timer.key), 140.0)

    # then
    assert [t.fire_at for t in state.timers] == [155.0]
    assert state.next_wake_at == 100.0  # the attempt itself is due since 100
    assert second[0].timer.key != first[0].timer.key
    assert stale == []
    assert state.heartbeat is not None and state.heartbeat.details == {"n": 1}

    # when the current timer fires
    state, failed = _apply(defn, state, cmd.TimerFired(second[0].timer.key), 155.0)

    # then
    fired, failed = failed[0], failed[1:]
    assert fired == ev.TimerFired("work", second[0].timer.key, "heartbeat")
    assert isinstance(failed[0], ev.ActivityFailed)
    assert failed[0].error == HEARTBEAT_TIMEOUT
    assert isinstance(failed[1], ev.ActivityScheduled)
    assert (failed[1].attempt, failed[1].heartbeat_details) == (2, {"n": 1})
    assert state.timers == ()


@pytest.mark.parametrize(
    "beat",
    [
        cmd.Heartbeat("work", 2),  # another attempt
        cmd.Heartbeat("work", 1, undo=True),
        cmd.Heartbeat("work", 1, round=2),
        cmd.Heartbeat("other", 1),
    ],
)
def test_a_heartbeat_of_an_attempt_not_awaited_changes_nothing(beat: cmd.Heartbeat) -> None:
    defn, state = _running(timeout=300, heartbeat_timeout=30)

    after, events = _apply(defn, state, beat, 110.0)

    assert events == []
    assert after == state


def test_an_outcome_naming_another_round_is_stale() -> None:
    defn, state = _running()

    after, events = _apply(defn, state, cmd.ActivityCompleted("work", 1, round=2), 110.0)
    _, events_now = _apply(defn, state, cmd.ActivityCompleted("work", 1, round=1), 110.0)

    assert (events, after) == ([], state)
    assert [type(e) for e in events_now] == [
        ev.ActivitySucceeded,
        ev.StepCompleted,
        ev.WorkflowCompleted,
    ]


@pytest.mark.parametrize(
    ("fields", "path", "problem"),
    [
        ({"timeout": 10, "heartbeat_timeout": 20}, "$.steps[0].heartbeat_timeout", "timeout"),
        ({"heartbeat_timeout": 0}, "$.steps[0].heartbeat_timeout", "more than zero"),
        ({"heartbeat_timeout": "soon"}, "$.steps[0].heartbeat_timeout", ""),
        (
            {"compensate": {"activity": "undo", "timeout": 5, "heartbeat_timeout": 6}},
            "$.steps[0].compensate.heartbeat_timeout",
            "timeout",
        ),
    ],
)
def test_a_bad_heartbeat_timeout_is_refused_naming_its_path(
    fields: dict[str, Any], path: str, problem: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        definition(action("work", "work", **fields))

    assert caught.value.path == path
    assert problem in caught.value.problem


def test_a_heartbeat_timeout_parses_on_the_step_and_its_compensation() -> None:
    defn = definition(
        action(
            "work",
            "work",
            timeout="PT1H",
            heartbeat_timeout="PT1M",
            compensate={"activity": "undo", "heartbeat_timeout": 30},
        )
    )

    step = defn.action("work")
    assert step.run.heartbeat_timeout == 60.0
    assert step.compensate is not None and step.compensate.heartbeat_timeout == 30.0


def test_a_long_job_cut_by_its_timeout_resumes_from_its_last_heartbeat(clock: FakeClock) -> None:
    # given: docs/workflow-templates.md's export, 2 s per 1,000 rows, under a 15 s timeout
    starts: list[int] = []

    def export(ctx: ActivityContext) -> dict[str, int]:
        rows: int = (ctx.last_heartbeat_details or {}).get("rows", 0)
        starts.append(rows)
        while rows < 10_000:
            ctx.sleep(2)
            rows += 1_000
            ctx.heartbeat({"rows": rows})
        return {"rows": rows}

    engine = _engine(clock, export, timeout=15, heartbeat_timeout=5)
    engine.start("wf", {})

    # when
    status = drive(engine, "wf")

    # then: the first attempt got to 7,000 rows in its 15 s; the second went on from there
    assert status == COMPLETED
    assert engine.history("wf") == ["work:error:1", "work:ok:2"]
    assert [e.error for e in _of(engine, ev.ActivityFailed)] == [TIMEOUT]
    assert starts == [0, 7_000]
    assert engine.state("wf").data["results"] == {"work": {"rows": 10_000}}


def test_a_compensation_that_stops_heartbeating_is_retried_by_its_own_policy(
    clock: FakeClock,
) -> None:
    # given: the undo of "book" hangs on its first try
    def unbook(ctx: ActivityContext) -> None:
        ctx.sleep(60 if ctx.attempt == 1 else 1)

    def fail(key: str, data: dict[str, Any]) -> None:
        raise RuntimeError("no")

    undo = {"activity": "unbook", "timeout": 120, "heartbeat_timeout": 10, "retry": NO_JITTER}
    defn = definition(
        action("book", "book", compensate=undo), action("pay", "pay", retry={"max_attempts": 1})
    )
    activities = {"book": lambda k, d: None, "unbook": unbook, "pay": fail}
    engine = InMemoryEngine(defn, activities, clock, random.Random(1))
    engine.start("wf", {})

    # when
    status = drive(engine, "wf")

    # then
    assert status == ROLLED_BACK
    assert engine.history("wf") == [
        "book:ok:1",
        "pay:error:1",
        "undo:book:error:1",
        "undo:book:ok:2",
    ]
    failed = [e for e in _of(engine, ev.ActivityFailed) if e.undo]
    assert [e.error for e in failed] == [HEARTBEAT_TIMEOUT]
    assert all(b.undo for b in _of(engine, ev.ActivityHeartbeat))
    assert _replays(engine)


def test_the_snapshot_keeps_rounds_and_the_heartbeat_lease() -> None:
    # given: a second round whose attempt gave a heartbeat, over a completed first round
    defn = definition(
        action("work", "work", timeout=300, heartbeat_timeout=30, compensate="unwork")
    )
    state = State()
    for event in [
        ev.WorkflowStarted("test-flow", 1, {}, None),
        ev.ActivityScheduled("work", "work", "default", 1, 100.0, 300.0, False, 1, 30.0),
        ev.ActivitySucceeded("work", 1),
        ev.StepCompleted("work", compensate=True),
        ev.ActivityScheduled("work", "work", "default", 1, 200.0, 300.0, False, 2, 30.0),
    ]:
        state = evolve(state, event)
    state, _ = _apply(defn, state, cmd.Heartbeat("work", 1, {"n": 5}), 210.0)

    # when
    stored = json.loads(json.dumps(state_to_dict(state)))

    # then
    assert state.rounds == (("work", 2),)
    assert state.compensations == (("work", 1),)
    assert state.heartbeat is not None and state.heartbeat.timer is not None
    assert state_from_dict(stored) == state
