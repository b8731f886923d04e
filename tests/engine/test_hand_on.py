"""A leaver's task handed on (Reassign with ``left``): back to a group's other members
without adding them twice, to a named person, and never to someone segregation of
duties rules out."""

from __future__ import annotations

import random

import pytest

from templates_engine import CommandRejected, Context, StaticDirectory, decide, errors, evolve
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import approval, definition

DIRECTORY = StaticDirectory(
    managers={"alice": "bob", "ivan": "victor"},
    groups={"it": ["ivan", "irene", "igor"]},
    users=frozenset({"victor", "zoe"}),
)


def _started(step: dict[str, object], clock: FakeClock) -> tuple[object, InMemoryEngine]:
    defn = definition(step)
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), DIRECTORY)
    engine.start("wf", {}, submitter="alice")
    return defn, engine


def _after(defn: object, engine: InMemoryEngine, command: cmd.Reassign, clock: FakeClock):
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    state = engine.state("wf")
    events = decide(defn, state, command, ctx)  # type: ignore[arg-type]
    for e in events:
        state = evolve(state, e)
    return events, state


def test_a_group_task_handed_back_leaves_the_other_members_holding_it_once(
    clock: FakeClock,
) -> None:
    defn, engine = _started(approval("it", {"group": "it"}), clock)

    events, state = _after(
        defn,
        engine,
        cmd.Reassign(None, "ivan", "igor", "left", left=True, also_to=("irene",)),
        clock,
    )

    assert [(e.to_user, e.reason, e.replace) for e in events] == [
        ("igor", ev.HANDED_ON, False),
        ("irene", ev.HANDED_ON, True),
    ]
    assert sorted((a.user, a.slot) for a in state.outstanding()) == [("igor", 0), ("irene", 0)]


def test_a_named_task_handed_on_goes_to_the_receiver_alone(clock: FakeClock) -> None:
    defn, engine = _started(approval("it", {"user": "zoe"}, {"manager": "submitter"}), clock)

    events, state = _after(
        defn, engine, cmd.Reassign(None, "bob", "victor", "left", left=True), clock
    )

    assert [(e.from_user, e.to_user, e.reason) for e in events] == [("bob", "victor", ev.HANDED_ON)]
    assert sorted(a.user for a in state.outstanding()) == ["victor", "zoe"]


def test_a_task_is_never_handed_on_to_the_submitter(clock: FakeClock) -> None:
    defn, engine = _started(approval("it", {"manager": "submitter"}), clock)

    with pytest.raises(CommandRejected) as caught:
        _after(defn, engine, cmd.Reassign(None, "bob", "alice", "left", left=True), clock)

    assert caught.value.code == errors.SEGREGATION_OF_DUTIES
