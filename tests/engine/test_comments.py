"""Comments on a request: a Comment command records one CommentAdded event, on a
running or a finished workflow, and changes no step; its limits refuse it whole."""

from __future__ import annotations

import random

import pytest

from templates_engine import (
    CommandRejected,
    Context,
    StaticDirectory,
    decide,
    errors,
    evolve,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.comments import (
    COMMENT_EMPTY,
    COMMENT_MAX,
    COMMENT_NUL,
    COMMENT_TOO_LONG,
    MENTION_NOT_IN_TEXT,
    MENTIONS_MAX,
    TOO_MANY_MENTIONS,
    mentions_in,
)
from templates_engine.state import State

from .support import approval, definition

FLOW = definition(approval("manager", {"manager": "submitter"}, title="Manager"))
PEOPLE = StaticDirectory(managers={"alice": "bob"})


def _ctx() -> Context:
    return Context(now=1_764_000_000.0, rng=random.Random(1), directory=PEOPLE)


def _running() -> tuple[list[ev.Event], State]:
    events = decide(FLOW, replay(FLOW, ()), cmd.Start({}, "alice"), _ctx())
    return events, replay(FLOW, events)


def _finished() -> State:
    events, state = _running()
    events += decide(FLOW, state, cmd.Decide("bob", "approve"), _ctx())
    return replay(FLOW, events)


def test_a_comment_on_a_running_request_is_one_event_that_changes_no_step() -> None:
    # given
    _, state = _running()

    # when
    events = decide(FLOW, state, cmd.Comment("alice", "Receipt is in the mail @bob"), _ctx())

    # then
    assert events == [ev.CommentAdded("alice", "Receipt is in the mail @bob")]
    after = replay(FLOW, [*_running()[0], *events])
    assert after == state


def test_a_comment_keeps_its_mentions_once_each() -> None:
    _, state = _running()

    events = decide(
        FLOW,
        state,
        cmd.Comment("bob", "@farah @fiona see @farah", ("farah", "fiona", "farah")),
        _ctx(),
    )

    assert events == [ev.CommentAdded("bob", "@farah @fiona see @farah", ("farah", "fiona"))]


def test_a_comment_on_a_finished_request_is_recorded_and_the_status_stays() -> None:
    # given: approved
    state = _finished()

    # when
    events = decide(FLOW, state, cmd.Comment("alice", "Paid, thanks?"), _ctx())

    # then
    assert events == [ev.CommentAdded("alice", "Paid, thanks?")]
    assert evolve(state, events[0]) == state
    assert state.status == "COMPLETED"


def test_a_comment_before_the_start_is_refused() -> None:
    with pytest.raises(CommandRejected) as caught:
        decide(FLOW, replay(FLOW, ()), cmd.Comment("alice", "hello"), _ctx())
    assert caught.value.code == errors.NOT_STARTED


@pytest.mark.parametrize(
    ("text", "mentions", "message"),
    [
        ("", (), COMMENT_EMPTY),
        ("   \n\t", (), COMMENT_EMPTY),
        ("nul \x00 inside", (), COMMENT_NUL),
        ("x" * (COMMENT_MAX + 1), (), COMMENT_TOO_LONG.format(count=COMMENT_MAX + 1)),
        ("hello farah", ("farah",), MENTION_NOT_IN_TEXT),
        (
            " ".join(f"@p{i}" for i in range(MENTIONS_MAX + 1)),
            tuple(f"p{i}" for i in range(MENTIONS_MAX + 1)),
            TOO_MANY_MENTIONS,
        ),
    ],
    ids=["empty", "blank", "nul", "too-long", "mention-not-in-text", "too-many-mentions"],
)
def test_a_comment_outside_its_limits_is_refused_with_a_sentence(
    text: str, mentions: tuple[str, ...], message: str
) -> None:
    _, state = _running()

    with pytest.raises(CommandRejected) as caught:
        decide(FLOW, state, cmd.Comment("alice", text, mentions), _ctx())

    assert caught.value.code == errors.INVALID_COMMENT
    assert caught.value.message == message


def test_a_comment_of_exactly_the_longest_length_is_recorded() -> None:
    _, state = _running()

    events = decide(FLOW, state, cmd.Comment("alice", "y" * COMMENT_MAX), _ctx())

    assert len(events) == 1


def test_the_too_long_sentence_says_the_limit_and_the_count_in_words() -> None:
    assert COMMENT_TOO_LONG.format(count=2001).startswith(
        "A comment holds at most 2,000 characters; this one has 2,001."
    )


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("@farah please look", ("farah",)),
        ("Ask @farah.", ("farah",)),
        ("(@farah, @fiona)", ("farah", "fiona")),
        ("mail bob@example.com", ()),
        ("@farah and @farah", ("farah",)),
        ("a lone @ sign", ()),
        ("@j.doe-2 knows", ("j.doe-2",)),
    ],
)
def test_mentions_are_read_from_the_text(text: str, names: tuple[str, ...]) -> None:
    assert mentions_in(text) == names
