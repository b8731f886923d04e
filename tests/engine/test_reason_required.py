"""A rejection or a send-back carries the approver's reason: without one the engine
refuses it (REASON_REQUIRED) and records nothing, unless the approval step says
``"reason_required": false``. Approving, and the submitter's withdrawal, need none."""

from __future__ import annotations

import random

import pytest

from templates_engine import CommandRejected, DefinitionError, StaticDirectory, errors
from templates_engine.state import REJECTED
from templates_engine.steps.approval import REASON_REQUIRED, REASON_REQUIRED_SHAPE
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import approval, definition

PEOPLE = StaticDirectory(managers={"alice": "bob"}, groups={}, users=frozenset())


def _engine(**fields: object) -> InMemoryEngine:
    defn = definition(approval("manager", {"manager": "submitter"}, **fields))
    engine = InMemoryEngine(defn, {}, FakeClock(), random.Random(1), PEOPLE)
    engine.start("wf", {}, submitter="alice")
    return engine


@pytest.mark.parametrize(("decision", "words"), [("reject", "reject"), ("send_back", "send back")])
@pytest.mark.parametrize("comment", ["", "   \n "])
def test_turning_a_request_back_without_a_reason_is_refused_and_records_nothing(
    decision: str, words: str, comment: str
) -> None:
    engine = _engine()
    before = engine.events("wf")

    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", "bob", decision, "rq-1", comment=comment)

    assert caught.value.code == errors.REASON_REQUIRED
    assert caught.value.message == REASON_REQUIRED.format(decision=words)
    assert engine.events("wf") == before


def test_a_rejection_with_a_reason_is_recorded() -> None:
    engine = _engine()

    assert engine.decide("wf", "bob", "reject", "rq-1", comment="no receipt") == REJECTED


def test_a_step_may_relax_the_reason() -> None:
    engine = _engine(reason_required=False)

    assert engine.decide("wf", "bob", "reject", "rq-1") == REJECTED


def test_whose_step_it_is_comes_before_the_reason() -> None:
    engine = _engine()

    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", "zoe", "reject", "rq-1")

    assert caught.value.code == errors.NOT_YOUR_STEP


@pytest.mark.parametrize("value", ["no", 0, None])
def test_reason_required_must_be_true_or_false(value: object) -> None:
    with pytest.raises(DefinitionError) as caught:
        definition(approval("manager", {"manager": "submitter"}, reason_required=value))

    assert caught.value.path == "$.steps[0].reason_required"
    assert caught.value.problem == REASON_REQUIRED_SHAPE
