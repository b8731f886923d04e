"""Whose step it is, before segregation of duties: a decision by someone who holds no
task on the current step is NOT_YOUR_STEP, naming the step by its title, even where
segregation of duties would also rule them out; SEGREGATION_OF_DUTIES answers where the
step reaches the person (a history's assignee, a delegate, a principal acted for, an
administrator's reassignment)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from templates_engine import (
    CommandRejected,
    Context,
    Delegation,
    StaticDirectory,
    decide,
    errors,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.decider import WAITING_FOR_SUBMITTER
from templates_engine.segregation import (
    ONE_STEP_EACH,
    SUBMITTER_MAY_NOT_DECIDE,
    SUBMITTER_MAY_NOT_HOLD,
)
from templates_engine.steps.approval import NOT_THEIR_DELEGATE, NOT_WAITING_FOR
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition

DAY = 86_400.0
# bob is alice's manager and not in finance; victor is carol's manager and in finance.
PEOPLE = StaticDirectory(
    managers={"alice": "bob", "carol": "victor"},
    groups={"finance": ["fiona", "victor"]},
    users=frozenset({"zoe", "admin"}),
)
FOUR_EYES = definition(
    approval("manager", {"manager": "submitter"}, title="Manager"),
    approval("fin", {"group": "finance"}, title="Finance"),
    distinct_approvers=True,
)


def _engine(directory: StaticDirectory = PEOPLE, *away: Delegation) -> InMemoryEngine:
    people = StaticDirectory(
        directory.managers, directory.groups, directory.users, delegations=away
    )
    return InMemoryEngine(FOUR_EYES, {}, FakeClock(), random.Random(5), people)


def _refusal(engine: InMemoryEngine, actor: str, decision: str, **kw: Any) -> CommandRejected:
    before = engine.events("wf")
    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", actor, decision, f"rq-{len(before)}", **kw)
    assert engine.events("wf") == before  # nothing happened
    return caught.value


def test_the_manager_approving_again_at_finance_is_told_it_is_not_his_step() -> None:
    # given: bob approved as alice's manager; the request waits for finance
    engine = _engine()
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "rq-bob")

    # when: he approves again, where four eyes would also rule him out
    refusal = _refusal(engine, "bob", "approve")

    # then: it is not his step, and the message names the step by its title, not its id
    assert refusal.code == errors.NOT_YOUR_STEP
    assert refusal.message == NOT_WAITING_FOR.format(step="Finance")
    assert "fin " not in refusal.message


def test_the_submitter_deciding_a_step_she_does_not_hold_is_told_it_is_not_hers() -> None:
    engine = _engine()
    engine.start("wf", {}, submitter="alice")

    refusal = _refusal(engine, "alice", "reject")

    assert refusal.code == errors.NOT_YOUR_STEP
    assert refusal.message == NOT_WAITING_FOR.format(step="Manager")


def test_an_approver_ruled_out_of_the_step_by_four_eyes_is_told_it_is_not_his() -> None:
    # given: victor approved as carol's manager and sits in finance, so finance went to
    # fiona alone
    engine = _engine()
    engine.start("wf", {}, submitter="carol")
    engine.decide("wf", "victor", "approve", "rq-victor")
    assert [a.user for a in engine.state("wf").assignments] == ["fiona"]

    refusal = _refusal(engine, "victor", "approve")

    assert refusal.code == errors.NOT_YOUR_STEP


def test_a_step_without_a_title_is_named_by_its_id_in_words() -> None:
    defn = definition(approval("sign_off", {"user": "zoe"}))
    engine = InMemoryEngine(defn, {}, FakeClock(), random.Random(5), PEOPLE)
    engine.start("wf", {}, submitter="alice")

    refusal = _refusal(engine, "fiona", "approve")

    assert refusal.message == NOT_WAITING_FOR.format(step="Sign off")


# -- where segregation of duties still answers ----------------------------------------


def test_an_assignee_a_history_gave_the_step_is_refused_for_segregation_of_duties() -> None:
    # given: a history recorded before four eyes, in which bob holds both steps
    history: list[ev.Event] = [
        ev.WorkflowStarted("test-flow", 1, {}, "alice"),
        ev.ApprovalRequested("manager", (ev.Assignment("bob", 0),), 1, "any", None),
        ev.DecisionRecorded("manager", "bob", "approve", 0),
        ev.StepCompleted("manager"),
        ev.ApprovalRequested("fin", (ev.Assignment("bob", 0),), 1, "any", None),
    ]
    ctx = Context(now=0.0, directory=PEOPLE)

    # when
    with pytest.raises(CommandRejected) as caught:
        decide(FOUR_EYES, replay(FOUR_EYES, history), cmd.Decide("bob", "approve"), ctx)

    # then: the step reached him, so the answer is the rule that stops him
    assert caught.value.code == errors.SEGREGATION_OF_DUTIES
    assert caught.value.message == ONE_STEP_EACH.format(user="bob", step="manager")


def test_an_out_of_office_delegate_who_approved_earlier_is_refused_for_segregation() -> None:
    # given: fiona is away from the moment finance begins, and bob stands in for her
    engine = _engine(PEOPLE, Delegation("fiona", "bob", 100.0, DAY))
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "rq-bob")
    engine.clock.advance(200.0)

    # when: bob decides for fiona, whose task it is
    refusal = _refusal(engine, "bob", "approve", on_behalf_of="fiona")

    # then
    assert refusal.code == errors.SEGREGATION_OF_DUTIES
    assert refusal.message == ONE_STEP_EACH.format(user="bob", step="manager")


def test_handing_the_task_to_the_submitter_is_refused_for_segregation_of_duties() -> None:
    engine = _engine()
    engine.start("wf", {}, submitter="alice")

    refusal = _refusal(engine, "bob", "delegate", delegate_to="alice")

    assert refusal.code == errors.SEGREGATION_OF_DUTIES
    assert refusal.message == SUBMITTER_MAY_NOT_HOLD


def test_deciding_on_behalf_of_the_submitter_is_refused_for_segregation_of_duties() -> None:
    # given: alice is away and bob, who holds the step, stands in for her
    engine = _engine(PEOPLE, Delegation("alice", "bob", 0.0, DAY))
    engine.start("wf", {}, submitter="alice")

    refusal = _refusal(engine, "bob", "approve", on_behalf_of="alice")

    assert refusal.code == errors.SEGREGATION_OF_DUTIES
    assert refusal.message == SUBMITTER_MAY_NOT_DECIDE


def test_an_administrator_reassigning_to_an_earlier_approver_is_refused_for_segregation() -> None:
    engine = _engine()
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "rq-bob")
    ctx = Context(now=engine.clock.now(), directory=PEOPLE)

    with pytest.raises(CommandRejected) as caught:
        decide(FOUR_EYES, engine.state("wf"), cmd.Reassign("admin", "fiona", "bob"), ctx)

    assert caught.value.code == errors.SEGREGATION_OF_DUTIES


def test_deciding_for_someone_one_does_not_stand_in_for_is_not_ones_step() -> None:
    engine = _engine()
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "rq-bob")

    refusal = _refusal(engine, "zoe", "approve", on_behalf_of="fiona")

    assert refusal.code == errors.NOT_YOUR_STEP
    assert refusal.message == NOT_THEIR_DELEGATE.format(step="Finance", principal="fiona")


def test_a_decision_while_an_automated_step_runs_names_that_step() -> None:
    defn = definition(
        action("reserve", "reserve_budget", title="Reserve budget"),
        approval("fin", {"group": "finance"}, title="Finance"),
    )
    budget = {"reserve_budget": lambda data, key: {}}
    engine = InMemoryEngine(defn, budget, FakeClock(), random.Random(5), PEOPLE)
    engine.start("wf", {}, submitter="alice")  # the attempt waits for run()

    refusal = _refusal(engine, "fiona", "approve")

    assert refusal.code == errors.NOT_YOUR_STEP
    assert refusal.message == NOT_WAITING_FOR.format(step="Reserve budget")


def test_a_decision_while_the_submitter_makes_changes_says_so() -> None:
    defn = definition(
        approval("manager", {"manager": "submitter"}, title="Manager", on_reject="submitter")
    )
    engine = InMemoryEngine(defn, {}, FakeClock(), random.Random(5), PEOPLE)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "reject", "rq-bob", comment="needs another look")

    refusal = _refusal(engine, "bob", "approve")

    assert refusal.code == errors.NOT_YOUR_STEP
    assert refusal.message == WAITING_FOR_SUBMITTER
