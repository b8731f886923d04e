"""A hand-over (a delegation by the holder, an administrator's reassignment) carries its
note into the event; a note over HANDOVER_NOTE_MAX characters is refused whole."""

from __future__ import annotations

import random

import pytest

from templates_engine import CommandRejected, Context, StaticDirectory, decide, errors
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.steps.approval import HANDOVER_NOTE_MAX
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import approval, definition

DIRECTORY = StaticDirectory(managers={"alice": "bob"}, users=frozenset({"zoe", "admin"}))
DEFN = definition(approval("manager", {"manager": "submitter"}))
LONG = "x" * (HANDOVER_NOTE_MAX + 1)


def _started(clock: FakeClock) -> InMemoryEngine:
    engine = InMemoryEngine(DEFN, {}, clock, random.Random(1), DIRECTORY)
    engine.start("wf", {}, submitter="alice")
    return engine


@pytest.mark.parametrize(
    "command",
    [
        cmd.Decide("bob", "delegate", "Back on Monday", delegate_to="zoe"),
        cmd.Reassign("admin", "bob", "zoe", "Back on Monday"),
    ],
)
def test_the_note_is_in_the_event(clock: FakeClock, command: cmd.Command) -> None:
    engine = _started(clock)
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    (moved,) = decide(DEFN, engine.state("wf"), command, ctx)
    assert isinstance(moved, ev.TaskReassigned) and moved.comment == "Back on Monday"


@pytest.mark.parametrize(
    "command",
    [
        cmd.Decide("bob", "delegate", LONG, delegate_to="zoe"),
        cmd.Reassign("admin", "bob", "zoe", LONG),
    ],
)
def test_a_note_too_long_is_refused(clock: FakeClock, command: cmd.Command) -> None:
    engine = _started(clock)
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    with pytest.raises(CommandRejected) as caught:
        decide(DEFN, engine.state("wf"), command, ctx)
    assert caught.value.code == errors.INVALID_COMMENT
    assert f"{HANDOVER_NOTE_MAX:,} characters; this one has {len(LONG):,}" in caught.value.message
