"""The snapshot, the command's fingerprint and ``State`` updates are built without
``dataclasses``' generic walks; what they give is what those walks give, value for value
and byte for byte once written as JSON (a snapshot is stored with every command, and a
fingerprint is hashed into the history)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from templates_engine import commands as cmd
from templates_engine.events import Assignment, Timer
from templates_engine.snapshot import SNAPSHOT_VERSION, plain, state_from_dict, state_to_dict
from templates_engine.state import HeartbeatLease, PendingActivity, State, replace

_text = st.text(max_size=6)
_json: Any = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)
_data = st.dictionaries(_text, _json, max_size=4)
_maybe_text = st.none() | _text
_pairs = st.lists(st.tuples(_text, st.integers()), max_size=3).map(tuple)

_states = st.builds(
    State,
    status=_text,
    workflow_type=_text,
    definition_version=st.integers(),
    data=_data,
    submitter=_maybe_text,
    step=_maybe_text,
    entries=st.integers(),
    assignments=st.lists(
        st.builds(Assignment, user=_text, slot=st.integers(), on_behalf_of=_maybe_text),
        max_size=3,
    ).map(tuple),
    approvals=_pairs,
    mode=_text,
    required=st.integers(),
    due_at=st.none() | st.floats(allow_nan=False),
    timers=st.lists(
        st.builds(Timer, key=_text, kind=_text, step=_text, fire_at=st.floats(allow_nan=False)),
        max_size=3,
    ).map(tuple),
    activity=st.none()
    | st.builds(
        PendingActivity,
        step=_text,
        activity=_text,
        queue=_text,
        attempt=st.integers(),
        not_before=st.floats(allow_nan=False),
        timeout=st.floats(allow_nan=False),
        undo=st.booleans(),
        round=st.integers(),
        heartbeat_timeout=st.none() | st.floats(allow_nan=False),
    ),
    awaiting_signal=_maybe_text,
    compensations=_pairs,
    outcome=_maybe_text,
    resubmit_step=_maybe_text,
    error=_maybe_text,
    step_approvals=st.lists(st.tuples(_text, _text), max_size=3).map(tuple),
    rounds=_pairs,
    heartbeat=st.none()
    | st.builds(
        HeartbeatLease,
        at=st.none() | st.floats(allow_nan=False),
        details=_json,
        timer=_maybe_text,
        beats=st.integers(),
    ),
    failed_step=_maybe_text,
    undone=st.lists(_text, max_size=3).map(tuple),
    failed_attempt=st.integers(),
    restarted_as=_maybe_text,
    settled=st.booleans(),
    withdrawn=st.booleans(),
    early_signals=st.lists(st.tuples(_text, _data), max_size=2).map(tuple),
    conversion=st.none() | _data,
)


def _text_of(value: Any) -> str:
    return json.dumps(value, sort_keys=False, default=str)


@settings(max_examples=300, deadline=None)
@given(_states)
def test_a_snapshot_is_what_asdict_gives(state: State) -> None:
    expected = {**dataclasses.asdict(state), "snapshot_version": SNAPSHOT_VERSION}

    doc = state_to_dict(state)

    assert doc == expected
    assert _text_of(doc) == _text_of(expected)  # the same keys in the same order
    assert state_from_dict(json.loads(json.dumps(doc))) == state_from_dict(
        json.loads(json.dumps(expected))
    )


def test_a_snapshot_shares_nothing_with_the_state() -> None:
    details = {"progress": [1, 2]}
    state = State(data={"lines": [{"amount": 1}]}, heartbeat=HeartbeatLease(details=details))

    doc = state_to_dict(state)
    doc["data"]["lines"][0]["amount"] = 2
    doc["heartbeat"]["details"]["progress"].append(3)

    assert state.data == {"lines": [{"amount": 1}]}
    assert details == {"progress": [1, 2]}


_COMMANDS = [
    cmd.Start(
        data={"amountPaise": 4_500_000, "lines": [{"a": 1}, (2, 3)]},
        submitter="alice",
        origin={"schedule": 7},
        conversion={"base": "INR", "rates": {"USD": "83.20"}},
    ),
    cmd.Decide("bob", "approve"),
    cmd.Decide(
        "alice", "approve", "resubmitted", on_behalf_of="ann", data={"amountPaise": 1, "x": None}
    ),
    cmd.Decide("bob", "delegate", delegate_to="cora"),
    cmd.TimerFired("deadline:manager:1"),
    cmd.ActivityCompleted("reserve", 2, result={"ok": [True, 1.5]}, round=3),
    cmd.ActivityFailed("reserve", 1, "Timeout", "late", undo=True, retryable=False),
    cmd.Heartbeat("reserve", 1, details={"done": [1, 2]}, round=2),
    cmd.Signal("paid", {"ref": "X-1", "lines": [{"n": 1}]}),
    cmd.Cancel(None, "duplicate"),
    cmd.Reassign("olga", "bob", "cora", "away", left=True, also_to=("dan", "eve")),
    cmd.Attach("alice", "ab" * 32, "receipt.pdf", 1024, "application/pdf"),
    cmd.Comment("bob", "@fiona look", ("fiona",)),
    cmd.RetryStep("olga", "fixed", restarted_as="wf-2"),
    cmd.RetryCompensation("olga", "again"),
    cmd.ResolveByHand("olga", "done by hand"),
    cmd.RearmTimer("olga", "deadline:manager:1", "more time"),
    cmd.AddApprover("bob", "cora", "manager", "a second pair of eyes"),
]


@pytest.mark.parametrize("command", _COMMANDS, ids=lambda c: type(c).__name__)
def test_a_command_is_fingerprinted_as_asdict_gives_it(command: cmd.Command) -> None:
    expected = dataclasses.asdict(command)  # type: ignore[call-overload]

    fields = plain(command)

    assert fields == expected
    assert json.dumps(fields, sort_keys=True, default=str) == json.dumps(
        expected, sort_keys=True, default=str
    )


def test_every_command_kind_is_among_those_checked() -> None:
    kinds = {
        c
        for c in vars(cmd).values()
        if isinstance(c, type) and issubclass(c, cmd.Command) and c is not cmd.Command
    }

    assert kinds == {type(c) for c in _COMMANDS}


@settings(max_examples=200, deadline=None)
@given(_states, _states, st.sets(st.sampled_from([f.name for f in dataclasses.fields(State)])))
def test_replace_is_dataclasses_replace(state: State, other: State, names: set[str]) -> None:
    changes = {name: getattr(other, name) for name in names}

    assert replace(state, **changes) == dataclasses.replace(state, **changes)


def test_replace_names_the_fields_state_does_not_have() -> None:
    with pytest.raises(TypeError, match=r"State has no field\(s\) nope, stage"):
        replace(State(), step="a", stage="b", nope=1)
