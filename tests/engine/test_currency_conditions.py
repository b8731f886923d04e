"""Conditions over an amount compare it in the organisation's base currency, at the
rate the start recorded in its WorkflowStarted event (templates_engine.money): a
999 USD expense routes as ₹83,117 would, a currency without a recorded rate is
refused, and a replay uses the recorded rate, never another."""

from __future__ import annotations

import random

import pytest

from templates_engine import (
    CommandRejected,
    Context,
    Definition,
    StaticDirectory,
    decide,
    errors,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.money import condition_data, convert
from templates_engine.state import SUBMITTER_STEP
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import expense, expense_document

DIRECTORY = StaticDirectory(
    managers={"alice": "bob"},
    groups={"finance": ["fiona"]},
    users=frozenset({"victor", "cora"}),
)
AT_83_20 = {
    "base": "INR",
    "rates": {"USD": {"rate": "83.20", "on": "2026-12-06", "factor": "83.20"}},
}


def _engine() -> InMemoryEngine:
    defn = Definition.parse(expense_document())
    return InMemoryEngine(defn, {}, FakeClock(0.0), random.Random(1), DIRECTORY)


def _asked(engine: InMemoryEngine) -> list[str]:
    return [e.step for e in engine.events("wf") if isinstance(e, ev.ApprovalRequested)]


def test_999_usd_routes_as_its_83117_rupees_would() -> None:
    usd, inr = _engine(), _engine()

    usd.start("wf", expense(99_900, currency="USD"), "alice", conversion=AT_83_20)
    inr.start("wf", expense(8_311_680), "alice", conversion={"base": "INR", "rates": {}})

    assert _asked(usd) == _asked(inr) == ["manager"]
    assert usd.state("wf").data["amountPaise"] == 99_900  # the data keeps its own currency


def test_the_started_event_records_the_rate_it_used() -> None:
    engine = _engine()

    engine.start("wf", expense(99_900, currency="USD"), "alice", conversion=AT_83_20)

    started = engine.events("wf")[0]
    assert isinstance(started, ev.WorkflowStarted)
    assert started.to_dict()["conversion"] == AT_83_20
    assert ev.event_from_dict(started.to_dict()) == started


def test_a_currency_without_a_recorded_rate_is_refused_and_nothing_starts() -> None:
    engine = _engine()

    with pytest.raises(CommandRejected) as caught:
        engine.start("wf", expense(99_900, currency="EUR"), "alice", conversion=AT_83_20)

    assert caught.value.code == errors.NO_EXCHANGE_RATE
    assert "No exchange rate from EUR to INR" in caught.value.message


def test_an_old_request_replays_with_the_rate_it_recorded() -> None:
    # given a 999 USD claim started at 83.20 (₹83,116.80: the manager, then finance),
    # its events stored and read back as a later process would
    defn = Definition.parse(expense_document())
    ctx = Context(now=0.0, directory=DIRECTORY)
    start = cmd.Start(expense(99_900, currency="USD"), "alice", conversion=AT_83_20)
    stored = [e.to_dict() for e in decide(defn, replay(defn, []), start, ctx)]
    state = replay(defn, [ev.event_from_dict(d) for d in stored])

    # when the manager approves (at 200.00 today it would be ₹1,99,800: the VP too)
    events = decide(defn, state, cmd.Decide("bob", "approve"), ctx)

    # then the next condition compares at the recorded 83.20
    asked = [e.step for e in events if isinstance(e, ev.ApprovalRequested)]
    assert state.conversion == AT_83_20
    assert asked == ["finance"]
    assert "vp" in [e.step for e in events if isinstance(e, ev.StepSkipped)]


def test_a_history_from_before_rates_compares_amounts_as_they_are() -> None:
    old = {
        "type": "WorkflowStarted",
        "v": 2,
        "workflow_type": "expense-approval",
        "definition_version": 1,
        "data": expense(99_900, currency="USD"),
        "submitter": "alice",
        "origin": None,
    }

    started = ev.event_from_dict(old)

    assert isinstance(started, ev.WorkflowStarted) and started.conversion is None
    schema = expense_document()["schema"]
    assert condition_data(started.data, schema, None)["amountPaise"] == 99_900


@pytest.mark.parametrize(
    ("minor", "factor", "expected"),
    [(99_900, "83.20", 8_311_680), (1, "0.5", 0), (3, "0.5", 2), (12_345, "0.0123", 152)],
)
def test_conversion_rounds_half_to_even_in_minor_units(
    minor: int, factor: str, expected: int
) -> None:
    assert convert(minor, factor) == expected


def _sent_back(engine: InMemoryEngine) -> None:
    """The manager sends alice's 999 USD claim back to her (rejections go back)."""
    engine.start("wf", expense(99_900, currency="USD"), "alice", conversion=AT_83_20)
    engine.decide("wf", "bob", "reject", "rq-1", comment="Which client?")
    assert engine.state("wf").step == SUBMITTER_STEP


def test_a_resubmitted_amount_compares_at_the_rate_the_start_recorded() -> None:
    engine = _engine()
    _sent_back(engine)

    # ₹1,04,000 at 83.20 (1,250 dollars): the VP too
    engine.decide("wf", "alice", "approve", "rq-2", data={"amountPaise": 125_000})

    assert _asked(engine)[-1] == "manager"
    engine.decide("wf", "bob", "approve", "rq-3")
    assert _asked(engine)[-1] == "vp"


def test_a_resubmission_in_a_currency_the_start_recorded_no_rate_for_is_refused() -> None:
    engine = _engine()
    _sent_back(engine)
    before = engine.events("wf")

    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", "alice", "approve", "rq-2", data={"currency": "EUR"})

    assert caught.value.code == errors.NO_EXCHANGE_RATE
    assert "No exchange rate from EUR to INR was recorded for this request" in caught.value.message
    assert engine.events("wf") == before
