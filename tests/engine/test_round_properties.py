"""Properties of rounds, over random sequences of approvals, send-backs, rejections and
activity failures on a route with two compensable action steps between approval steps:

    manager (approval) -> reserve (action) -> book (action) -> finance (approval,
    sends back to manager)

Every completed round is undone exactly once, newest first; no two calls in different
rounds share an idempotency key; the events alone rebuild the state.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from hypothesis import event, given, settings
from hypothesis import strategies as st

from templates_engine import (
    COMPENSATION_FAILED,
    COMPLETED,
    SUBMITTER_STEP,
    Definition,
    StaticDirectory,
    replay,
)
from templates_engine import events as ev
from templates_engine.keys import activity_key
from templates_engine.testing import FakeClock, InMemoryEngine

from ..properties import examples
from .support import drive

OK, FLAKY, FATAL = "ok", "flaky", "fatal"
DIRECTORY = StaticDirectory(managers={"alice": "bob"}, groups={"finance": ["fiona"]})


class Flaky(Exception):
    """A failure the policy retries (twice at most)."""


class Fatal(Exception):
    """A failure the policy lists as non-retryable."""


def _document(jitter: bool) -> dict[str, object]:
    retry = {"max_attempts": 2, "non_retryable": ["Fatal"], "jitter": jitter}
    return {
        "key": "rounds",
        "steps": [
            {"id": "manager", "kind": "approval", "approvers": [{"manager": "submitter"}]},
            {
                "id": "reserve",
                "kind": "action",
                "activity": "reserve",
                "retry": retry,
                "compensate": {"activity": "release", "retry": retry},
            },
            {
                "id": "book",
                "kind": "action",
                "activity": "book",
                "retry": retry,
                "compensate": {"activity": "unbook", "retry": retry},
            },
            {
                "id": "finance",
                "kind": "approval",
                "approvers": [{"group": "finance"}],
                "send_back_to": "manager",
            },
        ],
    }


@dataclass(frozen=True)
class Call:
    activity: str
    key: str
    outcome: str


class Activities:
    """Activities whose calls fail as the drawn outcomes say (in call order)."""

    def __init__(self, outcomes: list[str]) -> None:
        self.outcomes = list(outcomes)
        self.calls: list[Call] = []

    def make(self, name: str) -> object:
        def run(key: str, data: dict[str, object]) -> None:
            outcome = self.outcomes.pop(0) if self.outcomes else OK
            self.calls.append(Call(name, key, outcome))
            if outcome == FLAKY:
                raise Flaky(name)
            if outcome == FATAL:
                raise Fatal(name)

        return run


# weighted so that many examples reach a second or third round before they end
DECISIONS = ["approve"] * 5 + ["send_back"] * 3 + ["reject"]
decisions = st.lists(st.sampled_from(DECISIONS), min_size=5, max_size=20)
failures = st.lists(st.sampled_from([OK] * 8 + [FLAKY] * 2 + [FATAL]), max_size=24)

UNDO_OF = {"reserve": "release", "book": "unbook"}


@settings(max_examples=examples(300), deadline=None)
@given(decisions=decisions, outcomes=failures, jitter=st.booleans(), seed=st.integers(0, 2**16))
def test_rounds_are_keyed_apart_and_each_completed_round_is_undone_once_newest_first(
    decisions: list[str], outcomes: list[str], jitter: bool, seed: int
) -> None:
    # given
    definition = Definition.parse(_document(jitter))
    acts = Activities(outcomes)
    names = ["reserve", "release", "book", "unbook"]
    clock = FakeClock(50_000.0)
    engine = InMemoryEngine(
        definition, {n: acts.make(n) for n in names}, clock, random.Random(seed), DIRECTORY
    )
    engine.start("wf", {}, submitter="alice")

    # when: each decision goes to whoever the workflow waits for; then a final reject
    status = drive(engine, "wf")
    for n, decision in enumerate([*decisions, "reject", "reject"]):
        state = engine.state("wf")
        if state.terminal:
            break
        assert state.assignments, "a running workflow that needs nobody must need the clock"
        actor = state.outstanding()[0].user
        if state.step == SUBMITTER_STEP and decision == "send_back":
            decision = "approve"  # the submitter resubmits or withdraws
        engine.decide("wf", actor, decision, request_id=f"r{n}", comment=f"reason {n}")
        status = drive(engine, "wf")
    events = engine.events("wf")
    assert engine.state("wf").terminal

    event(f"status {status}")
    event(
        f"rounds {max((e.round for e in events if isinstance(e, ev.ActivityScheduled)), default=0)}"
    )

    # then: each call is the attempt scheduled, under the key of its round
    scheduled = [e for e in events if isinstance(e, ev.ActivityScheduled)]
    assert len(scheduled) == len(acts.calls)
    for call, sched in zip(acts.calls, scheduled, strict=True):
        assert call.key == activity_key("wf", sched.step, sched.undo, sched.round)
        expected_activity = UNDO_OF[sched.step] if sched.undo else sched.step
        assert call.activity == expected_activity

    # no two calls in different rounds (or of different steps) share a key
    owner: dict[str, tuple[str, bool, int]] = {}
    for call, sched in zip(acts.calls, scheduled, strict=True):
        assert owner.setdefault(call.key, (sched.step, sched.undo, sched.round)) == (
            sched.step,
            sched.undo,
            sched.round,
        )
    forward_rounds = [(s.step, s.round) for s in scheduled if not s.undo and s.attempt == 1]
    assert len(forward_rounds) == len(set(forward_rounds))

    # every completed round is undone once, newest first (unless an undo failed for good)
    completed = [
        c.key for c, s in zip(acts.calls, scheduled, strict=True) if not s.undo and c.outcome == OK
    ]
    undone = [
        c.key for c, s in zip(acts.calls, scheduled, strict=True) if s.undo and c.outcome == OK
    ]
    owed = ["wf/undo:" + key.removeprefix("wf/") for key in reversed(completed)]
    if status == COMPLETED:
        assert undone == []
    elif status == COMPENSATION_FAILED:
        assert undone == owed[: len(undone)]
        assert len(undone) < len(owed)
    else:
        assert undone == owed
    undo_calls = [c.key for c, s in zip(acts.calls, scheduled, strict=True) if s.undo]
    assert set(undo_calls) <= set(owed)
    left = engine.state("wf").compensations
    if status == COMPLETED:
        assert [f"wf/{step}" + (f"/{n}" if n > 1 else "") for step, n in left] == completed
    elif status != COMPENSATION_FAILED:
        assert left == ()

    # the history names the rounds after the first
    history = engine.history("wf")
    for entry, sched in zip(history, scheduled, strict=True):
        name = entry.rsplit(":", 2)[0]
        base = f"undo:{sched.step}" if sched.undo else sched.step
        assert name == (base if sched.round == 1 else f"{base}#{sched.round}")

    # the events alone rebuild the state, also after a trip through JSON
    state = engine.state("wf")
    assert replay(definition, events) == state
    stored = json.loads(json.dumps([e.to_dict() for e in events]))
    assert replay(definition, [ev.event_from_dict(doc) for doc in stored]) == state
