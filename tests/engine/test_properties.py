"""Properties of the saga rules, over random retry policies and failure patterns.

Each example builds a definition of 3-4 action steps, each with a compensation, and
activities that fail as a drawn pattern says; then drives it with the in-memory
engine, moving the fake clock to each wake-up time, until it ends.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from templates_engine import (
    COMPENSATION_FAILED,
    COMPLETED,
    ROLLED_BACK,
    Definition,
    replay,
)
from templates_engine import events as ev
from templates_engine.testing import FakeClock, InMemoryEngine

from ..properties import examples

OK, RETRY, FATAL = "ok", "retry", "fatal"


class Flaky(Exception):
    """A failure the policy may retry."""


class Fatal(Exception):
    """A failure every policy here lists as non-retryable."""


@dataclass(frozen=True)
class Plan:
    """One step: its two policies and what each attempt of it (and its undo) does."""

    retry: dict[str, Any]
    undo_retry: dict[str, Any]
    attempts: tuple[str, ...]  # outcome of attempt n at index n - 1; later ones succeed
    undo_attempts: tuple[str, ...]


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    initial = draw(st.floats(0, 5, allow_nan=False))
    return {
        "initial_interval": initial,
        "backoff_coefficient": draw(st.floats(1, 3, allow_nan=False)),
        "max_interval": initial + draw(st.floats(0, 20, allow_nan=False)),
        "max_attempts": draw(st.integers(1, 4)),
        "jitter": draw(st.booleans()),
        "non_retryable": ["Fatal"],
    }


outcomes = st.lists(st.sampled_from([OK, RETRY, RETRY, FATAL]), max_size=4).map(tuple)
plans = st.builds(Plan, policies(), policies(), outcomes, outcomes)


def _document(steps: list[Plan]) -> dict[str, Any]:
    return {
        "key": "saga",
        "steps": [
            {
                "id": f"s{i}",
                "kind": "action",
                "activity": f"do_s{i}",
                "retry": plan.retry,
                "compensate": {"activity": f"undo_s{i}", "retry": plan.undo_retry},
            }
            for i, plan in enumerate(steps)
        ],
    }


def _succeeds(policy: dict[str, Any], attempts: tuple[str, ...]) -> tuple[bool, int]:
    """The oracle: whether a step (or undo) ends well, and after how many calls."""
    for n in range(1, policy["max_attempts"] + 1):
        outcome = attempts[n - 1] if n <= len(attempts) else OK
        if outcome == OK:
            return True, n
        if outcome == FATAL:
            return False, n
    return False, policy["max_attempts"]


@dataclass(frozen=True)
class Call:
    name: str  # "s1" or "undo:s1", as in the history
    at: float


class Recorder:
    def __init__(self, steps: list[Plan], clock: FakeClock) -> None:
        self.steps, self.clock = steps, clock
        self.calls: list[Call] = []

    def activity(self, i: int, undo: bool) -> Any:
        name = f"undo:s{i}" if undo else f"s{i}"
        pattern = self.steps[i].undo_attempts if undo else self.steps[i].attempts

        def run(key: str, data: dict[str, Any]) -> Any:
            n = sum(1 for c in self.calls if c.name == name)  # earlier calls of this one
            self.calls.append(Call(name, self.clock.now()))
            outcome = pattern[n] if n < len(pattern) else OK
            if outcome == RETRY:
                raise Flaky(f"{name} attempt {n + 1}")
            if outcome == FATAL:
                raise Fatal(f"{name} gave up")
            return None if undo else {"ref": f"{key}#{n + 1}"}

        return run


def _drive(engine: InMemoryEngine, clock: FakeClock, workflow_id: str) -> str:
    for _ in range(500):
        status = engine.run(workflow_id)
        wake = engine.next_run_at(workflow_id)
        if wake is None:
            return status
        clock.advance(max(0.0, wake - clock.now()))
    raise AssertionError("the workflow did not end in 500 wake-ups")


@settings(max_examples=examples(200), deadline=None)
@given(steps=st.lists(plans, min_size=3, max_size=4), seed=st.integers(0, 2**32 - 1))
def test_saga_rules_hold_for_any_failure_pattern(steps: list[Plan], seed: int) -> None:
    # given
    definition = Definition.parse(_document(steps))
    clock = FakeClock(10_000.0)
    recorder = Recorder(steps, clock)
    activities = {}
    for i in range(len(steps)):
        activities[f"do_s{i}"] = recorder.activity(i, undo=False)
        activities[f"undo_s{i}"] = recorder.activity(i, undo=True)
    engine = InMemoryEngine(definition, activities, clock, random.Random(seed))

    # when
    engine.start("wf", {"n": len(steps)})
    status = _drive(engine, clock, "wf")
    events = engine.events("wf")

    # then: one history entry per call, in the order of the calls
    history = engine.history("wf")
    assert [entry.rsplit(":", 2)[0] for entry in history] == [c.name for c in recorder.calls]

    # no attempt before its wake-up time, and the attempt is the one scheduled
    scheduled = [e for e in events if isinstance(e, ev.ActivityScheduled)]
    assert len(scheduled) == len(recorder.calls)
    for call, entry, sched in zip(recorder.calls, history, scheduled, strict=True):
        assert call.at >= sched.not_before
        assert call.name == (f"undo:{sched.step}" if sched.undo else sched.step)
        assert entry.endswith(f":{sched.attempt}")

    # the outcome is what the policies say it should be
    forward = [c.name for c in recorder.calls if not c.name.startswith("undo:")]
    completed: list[str] = []
    failed = None
    for i, plan in enumerate(steps):
        ok, calls = _succeeds(plan.retry, plan.attempts)
        assert forward.count(f"s{i}") == calls <= plan.retry["max_attempts"]
        if not ok:
            failed = f"s{i}"
            break
        completed.append(f"s{i}")
    assert len(forward) == sum(forward.count(s) for s in [*completed, failed] if s)

    # undos run in reverse order of completion; the failed step is not undone
    undone = [c.name.removeprefix("undo:") for c in recorder.calls if c.name.startswith("undo:")]
    undo_order = list(dict.fromkeys(undone))
    if failed is None:
        assert status == COMPLETED
        assert undone == []
    else:
        assert failed not in undo_order
        expected_status = ROLLED_BACK
        expected_order: list[str] = []
        for step_id in reversed(completed):
            plan = steps[int(step_id[1:])]
            expected_order.append(step_id)
            ok, calls = _succeeds(plan.undo_retry, plan.undo_attempts)
            assert undone.count(step_id) == calls <= plan.undo_retry["max_attempts"]
            if not ok:
                expected_status = COMPENSATION_FAILED
                break
        assert undo_order == expected_order
        assert status == expected_status

    # a terminal state is final
    state = engine.state("wf")
    clock.advance(10**6)
    assert engine.run("wf") == status
    assert engine.events("wf") == events
    assert engine.next_run_at("wf") is None

    # the history alone rebuilds the state, also after a trip through JSON
    assert replay(definition, events) == state
    stored = json.loads(json.dumps([e.to_dict() for e in events]))
    assert replay(definition, [ev.event_from_dict(doc) for doc in stored]) == state
