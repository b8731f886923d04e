"""A file added to a request: the Attach command records one FileAttached event naming
the bytes by their SHA-256, changes nothing else, and is refused before the start or
when it does not say what it adds."""

from __future__ import annotations

import random

import pytest

from templates_engine import CommandRejected, Context, StaticDirectory, decide, errors, replay
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.decider import ATTACHMENT_UNREADABLE
from templates_engine.state import State

from .support import approval, definition

FLOW = definition(approval("manager", {"manager": "submitter"}, title="Manager"))
PEOPLE = StaticDirectory(managers={"alice": "bob"})
SHA = "0f" * 32


def _ctx() -> Context:
    return Context(now=1_000.0, rng=random.Random(1), directory=PEOPLE)


def _started() -> tuple[list[ev.Event], State]:
    events = decide(FLOW, State(), cmd.Start({}, "alice"), _ctx())
    return events, replay(FLOW, events)


def _receipt(**change: object) -> cmd.Attach:
    fields: dict[str, object] = {
        "actor": "alice",
        "sha256": SHA,
        "name": "receipt.pdf",
        "size": 120_000,
        "content_type": "application/pdf",
        **change,
    }
    return cmd.Attach(**fields)  # type: ignore[arg-type]


def test_an_attached_file_is_one_event_naming_its_hash_and_changes_nothing_else() -> None:
    events, state = _started()

    added = decide(FLOW, state, _receipt(), _ctx())

    assert added == [ev.FileAttached("alice", SHA, "receipt.pdf", 120_000, "application/pdf")]
    assert replay(FLOW, [*events, *added]) == state


def test_a_receipt_may_be_added_after_the_request_was_decided() -> None:
    events, state = _started()
    events += decide(FLOW, state, cmd.Decide("bob", "approve"), _ctx())
    finished = replay(FLOW, events)
    assert finished.terminal

    added = decide(FLOW, finished, _receipt(actor="bob"), _ctx())

    assert [type(e) for e in added] == [ev.FileAttached]
    assert replay(FLOW, [*events, *added]).status == finished.status


def test_a_file_cannot_be_attached_before_the_request_starts() -> None:
    with pytest.raises(CommandRejected) as caught:
        decide(FLOW, State(), _receipt(), _ctx())

    assert caught.value.code == errors.NOT_STARTED


@pytest.mark.parametrize(
    "change",
    [
        {"sha256": "not-a-hash"},
        {"sha256": SHA.upper()},
        {"name": ""},
        {"name": "x" * 256},
        {"size": -1},
        {"content_type": ""},
    ],
    ids=["sha", "upper-case-sha", "no-name", "long-name", "negative-size", "no-type"],
)
def test_an_attachment_that_does_not_say_what_it_adds_is_refused(change: dict[str, object]) -> None:
    _, state = _started()

    with pytest.raises(CommandRejected) as caught:
        decide(FLOW, state, _receipt(**change), _ctx())

    assert caught.value.code == errors.INVALID_DATA
    assert caught.value.message == ATTACHMENT_UNREADABLE
