"""The decider on approval steps: routing, modes, delegation, rejection, send-back."""

from __future__ import annotations

import random
from typing import Any

import pytest

from templates_engine import (
    CANCELLED,
    COMPLETED,
    REJECTED,
    ROLLED_BACK,
    RUNNING,
    CommandRejected,
    Context,
    Definition,
    Delegation,
    StaticDirectory,
    decide,
    errors,
    public_status,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition, expense, expense_document

DIRECTORY = StaticDirectory(
    managers={"alice": "bob", "bob": "carol", "dave": "erin"},
    groups={"finance": ["fiona", "frank"], "board": ["ann", "ben", "cat"]},
    users=frozenset({"victor", "zoe", "admin"}),
)
BOSS = {"manager": "submitter"}


def _engine(
    defn: Definition,
    clock: FakeClock,
    activities: dict[str, Any] | None = None,
    directory: StaticDirectory = DIRECTORY,
) -> InMemoryEngine:
    return InMemoryEngine(defn, activities or {}, clock, random.Random(5), directory)


def _pub(engine: InMemoryEngine, workflow_id: str = "wf") -> str:
    return public_status(engine.state(workflow_id))


def _rejected(code: str, engine: InMemoryEngine, actor: str, decision: str, **kw: Any) -> None:
    """Assert the decision is refused with ``code`` and changes nothing."""
    before = engine.events("wf")
    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", actor, decision, f"rq-{len(before)}-{actor}", **kw)
    assert caught.value.code == code
    assert engine.events("wf") == before


def _of(engine: InMemoryEngine, kind: type[ev.Event]) -> list[Any]:
    return [e for e in engine.events("wf") if isinstance(e, kind)]


@pytest.mark.parametrize(
    ("amount", "route"),
    [
        (99_999, []),
        (100_000, [("manager", "bob"), ("finance", "fiona")]),
        (4_500_000, [("manager", "bob"), ("finance", "fiona")]),
        (10_000_000, [("manager", "bob"), ("finance", "frank")]),
        (10_000_001, [("manager", "bob"), ("vp", "victor"), ("finance", "fiona")]),
    ],
)
def test_expense_routes_by_amount(
    clock: FakeClock, amount: int, route: list[tuple[str, str]]
) -> None:
    # given
    engine = _engine(Definition.parse(expense_document()), clock)

    # when
    engine.start("wf", expense(amount), submitter="alice")

    # then
    for i, (step, approver) in enumerate(route):
        assert engine.status("wf") == RUNNING
        assert _pub(engine) == f"PENDING_{step.upper()}"
        engine.decide("wf", approver, "approve", f"rq-{i}")
    assert engine.status("wf") == COMPLETED
    assert _pub(engine) == "APPROVED"
    assert [e.step for e in _of(engine, ev.DecisionRecorded)] == [s for s, _ in route]
    assert len(_of(engine, ev.StepSkipped)) == 3 - len(route)


def test_start_refuses_data_that_fails_the_schema(clock: FakeClock) -> None:
    engine = _engine(Definition.parse(expense_document()), clock)

    with pytest.raises(CommandRejected) as caught:
        engine.start("wf", expense("lots"), submitter="alice")

    assert caught.value.code == errors.INVALID_DATA
    assert "$.amountPaise" in caught.value.message


def test_start_twice_and_decide_before_start_are_refused(clock: FakeClock) -> None:
    defn = Definition.parse(expense_document())
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    started = decide(defn, replay(defn, []), cmd.Start(expense(5), "alice"), ctx)

    with pytest.raises(CommandRejected) as again:
        decide(defn, replay(defn, started), cmd.Start(expense(5), "alice"), ctx)
    with pytest.raises(CommandRejected) as early:
        decide(defn, replay(defn, []), cmd.Decide("bob", "approve"), ctx)

    assert again.value.code == errors.ALREADY_STARTED
    assert early.value.code == errors.NOT_STARTED


def test_an_unknown_decision_is_refused(clock: FakeClock) -> None:
    engine = _engine(definition(approval("a", BOSS)), clock)
    engine.start("wf", {}, submitter="alice")

    _rejected(errors.INVALID_DECISION, engine, "bob", "maybe")


def test_mode_any_one_approval_moves_on_and_the_others_lose_the_task(clock: FakeClock) -> None:
    # given
    defn = definition(
        approval("finance", {"group": "finance"}, mode="any"), approval("vp", {"user": "victor"})
    )
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")

    # when
    engine.decide("wf", "fiona", "approve", "rq-1")

    # then
    assert _pub(engine) == "PENDING_VP"
    _rejected(errors.NOT_YOUR_STEP, engine, "frank", "approve")
    _rejected(errors.NOT_YOUR_STEP, engine, "mallory", "approve")


def test_mode_all_waits_for_every_slot_and_counts_a_person_once(clock: FakeClock) -> None:
    # given
    defn = definition(approval("both", BOSS, {"group": "finance"}, mode="all"))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")

    # when
    engine.decide("wf", "bob", "approve", "rq-1")

    # then
    assert _pub(engine) == "PENDING_BOTH"
    _rejected(errors.ALREADY_DECIDED, engine, "bob", "approve")
    engine.decide("wf", "frank", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED
    assert [(d.actor, d.slot) for d in _of(engine, ev.DecisionRecorded)] == [
        ("bob", 0),
        ("frank", 1),
    ]


def test_mode_all_one_person_cannot_fill_two_slots(clock: FakeClock) -> None:
    # bob is the manager and the named user: the step could never complete
    defn = definition(approval("both", BOSS, {"user": "bob"}, mode="all"))
    engine = _engine(defn, clock)

    engine.start("wf", {}, submitter="alice")

    assert engine.status("wf") == ROLLED_BACK
    assert engine.state("wf").error == "NoApprovers: no one can be assigned to this step"


def test_quorum_two_of_three(clock: FakeClock) -> None:
    # given
    defn = definition(approval("board", {"group": "board"}, mode="quorum", quorum=2))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")
    assert engine.state("wf").required == 2

    # when
    engine.decide("wf", "ann", "approve", "rq-1")

    # then
    assert engine.status("wf") == RUNNING
    _rejected(errors.ALREADY_DECIDED, engine, "ann", "approve")
    engine.decide("wf", "cat", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED
    _rejected(errors.WORKFLOW_FINISHED, engine, "ben", "approve")


@pytest.mark.parametrize(
    "step",
    [
        approval("board", {"group": "finance"}, mode="quorum", quorum=3),
        approval("both", BOSS, {"user": "nobody"}, mode="all"),
        approval("lonely", {"group": "empty"}),
    ],
    ids=["quorum-above-group-size", "all-with-an-empty-slot", "any-with-nobody"],
)
def test_too_few_approvers_fail_the_step(clock: FakeClock, step: dict[str, Any]) -> None:
    engine = _engine(definition(step), clock)

    engine.start("wf", {}, submitter="alice")

    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.step, failed.error) == (step["id"], "NoApprovers")
    assert engine.status("wf") == ROLLED_BACK


def test_a_delegation_active_at_assignment_assigns_the_delegate(clock: FakeClock) -> None:
    # given
    away = Delegation("bob", "dave", clock.now() - 10, clock.now() + 86_400)
    directory = StaticDirectory(DIRECTORY.managers, DIRECTORY.groups, delegations=[away])
    engine = _engine(definition(approval("manager", BOSS)), clock, directory=directory)

    # when
    engine.start("wf", {}, submitter="alice")

    # then
    assert engine.state("wf").assignments == (ev.Assignment("dave", 0, "bob"),)
    _rejected(errors.NOT_YOUR_STEP, engine, "bob", "approve")
    engine.decide("wf", "dave", "approve", "rq-1")
    (recorded,) = _of(engine, ev.DecisionRecorded)
    assert (recorded.actor, recorded.on_behalf_of) == ("dave", "bob")
    assert engine.status("wf") == COMPLETED


def test_on_behalf_of_needs_a_delegation_active_at_decision_time(clock: FakeClock) -> None:
    # given: bob's delegation to dave starts an hour after the task is assigned to bob
    later = Delegation("bob", "dave", clock.now() + 3_600, clock.now() + 7_200)
    directory = StaticDirectory(DIRECTORY.managers, DIRECTORY.groups, delegations=[later])
    engine = _engine(definition(approval("manager", BOSS)), clock, directory=directory)
    engine.start("wf", {}, submitter="alice")
    assert engine.state("wf").assignments == (ev.Assignment("bob", 0),)
    _rejected(errors.NOT_YOUR_STEP, engine, "dave", "approve", on_behalf_of="bob")

    # when
    clock.advance(3_600)
    engine.decide("wf", "dave", "approve", "rq-1", on_behalf_of="bob")

    # then
    (recorded,) = _of(engine, ev.DecisionRecorded)
    assert (recorded.actor, recorded.on_behalf_of) == ("dave", "bob")
    assert engine.status("wf") == COMPLETED


def test_a_delegate_cannot_vote_twice_for_the_same_person_in_a_quorum(clock: FakeClock) -> None:
    # given: ann is away and dave stands in for her, from after the assignment
    away = Delegation("ann", "dave", clock.now() + 1, clock.now() + 7_200)
    directory = StaticDirectory(DIRECTORY.managers, DIRECTORY.groups, delegations=[away])
    defn = definition(approval("board", {"group": "board"}, mode="quorum", quorum=2))
    engine = _engine(defn, clock, directory=directory)
    engine.start("wf", {}, submitter="alice")
    clock.advance(1)

    # when
    engine.decide("wf", "dave", "approve", "rq-1", on_behalf_of="ann")

    # then: ann's task is spent, whoever tries to use it again
    _rejected(errors.ALREADY_DECIDED, engine, "dave", "approve", on_behalf_of="ann")
    _rejected(errors.ALREADY_DECIDED, engine, "ann", "approve")
    assert engine.status("wf") == RUNNING
    engine.decide("wf", "ben", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED


def test_an_approver_can_delegate_the_task_explicitly(clock: FakeClock) -> None:
    # given
    engine = _engine(definition(approval("manager", BOSS)), clock)
    engine.start("wf", {}, submitter="alice")
    _rejected(errors.INVALID_DECISION, engine, "bob", "delegate")
    _rejected(errors.INVALID_DECISION, engine, "bob", "delegate", delegate_to="bob")
    _rejected(errors.UNKNOWN_USER, engine, "bob", "delegate", delegate_to="ghost")

    # when
    engine.decide("wf", "bob", "delegate", "rq-1", delegate_to="zoe", comment="on leave")

    # then
    (moved,) = _of(engine, ev.TaskReassigned)
    assert (moved.from_user, moved.to_user, moved.reason) == ("bob", "zoe", "delegated")
    _rejected(errors.NOT_YOUR_STEP, engine, "bob", "approve")
    engine.decide("wf", "zoe", "approve", "rq-2")
    (recorded,) = _of(engine, ev.DecisionRecorded)
    assert (recorded.actor, recorded.on_behalf_of) == ("zoe", "bob")


def test_a_task_delegated_back_is_decided_in_ones_own_name(clock: FakeClock) -> None:
    engine = _engine(definition(approval("manager", BOSS)), clock)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "delegate", "rq-1", delegate_to="zoe")

    engine.decide("wf", "zoe", "delegate", "rq-2", delegate_to="bob")
    engine.decide("wf", "bob", "approve", "rq-3")

    (recorded,) = _of(engine, ev.DecisionRecorded)
    assert (recorded.actor, recorded.on_behalf_of) == ("bob", None)


def test_an_administrator_can_reassign_a_task(clock: FakeClock) -> None:
    defn = definition(approval("manager", BOSS))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    state = engine.state("wf")

    events = decide(defn, state, cmd.Reassign("admin", "bob", "zoe"), ctx)

    assert [type(e) for e in events] == [ev.TaskReassigned]
    with pytest.raises(CommandRejected) as caught:
        decide(defn, state, cmd.Reassign("admin", "fiona", "zoe"), ctx)
    assert caught.value.code == errors.NOT_YOUR_STEP


def test_a_rejection_undoes_completed_steps_in_reverse_order(clock: FakeClock) -> None:
    # given
    calls: list[str] = []

    def record(name: str) -> Any:
        return lambda key, data: calls.append(name)

    names = ["reserve", "release", "book", "unbook", "notify"]
    defn = definition(
        action("reserve", "reserve", compensate="release"),
        action("notify", "notify"),
        action("book", "book", compensate="unbook"),
        approval("manager", BOSS, on_reject="end"),
    )
    engine = _engine(defn, clock, {n: record(n) for n in names})
    engine.start("wf", {}, submitter="alice")
    engine.run("wf")
    assert _pub(engine) == "PENDING_MANAGER"

    # when
    engine.decide("wf", "bob", "reject", "rq-1", comment="no")
    engine.run("wf")

    # then
    assert engine.status("wf") == REJECTED
    assert calls == ["reserve", "notify", "book", "unbook", "release"]
    assert engine.history("wf") == [
        "reserve:ok:1",
        "notify:ok:1",
        "book:ok:1",
        "undo:book:ok:1",
        "undo:reserve:ok:1",
    ]
    (started,) = _of(engine, ev.CompensationStarted)
    assert started.outcome == REJECTED


def test_send_back_to_the_submitter_and_resubmit(clock: FakeClock) -> None:
    # given
    engine = _engine(Definition.parse(expense_document()), clock)
    engine.start("wf", expense(4_500_000), submitter="alice")

    # when: the manager's send-back goes to the submitter (the step's default)
    engine.decide("wf", "bob", "send_back", "rq-2", comment="add a purpose")

    # then
    assert _pub(engine) == "PENDING_SUBMITTER"
    _rejected(errors.NOT_YOUR_STEP, engine, "bob", "approve")
    _rejected(errors.INVALID_DATA, engine, "alice", "approve", data={"amountPaise": -1})
    _rejected(errors.INVALID_DECISION, engine, "alice", "send_back")
    engine.decide("wf", "alice", "approve", "rq-3", data={"description": "client dinner"})
    assert _pub(engine) == "PENDING_MANAGER"
    assert engine.state("wf").data == expense(4_500_000, description="client dinner")
    engine.decide("wf", "bob", "approve", "rq-4")
    engine.decide("wf", "fiona", "approve", "rq-5")
    assert _pub(engine) == "APPROVED"


def test_the_submitter_can_withdraw_after_a_send_back(clock: FakeClock) -> None:
    engine = _engine(Definition.parse(expense_document()), clock)
    engine.start("wf", expense(200_000), submitter="alice")
    engine.decide("wf", "bob", "send_back", "rq-1", comment="needs another look")

    engine.decide("wf", "alice", "reject", "rq-2")

    assert engine.status("wf") == CANCELLED
    _rejected(errors.WORKFLOW_FINISHED, engine, "alice", "approve")


def test_a_reject_can_send_the_workflow_back_to_an_earlier_step(clock: FakeClock) -> None:
    defn = definition(
        approval("manager", BOSS), approval("finance", {"group": "finance"}, on_reject="manager")
    )
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "rq-1")

    engine.decide("wf", "frank", "reject", "rq-2", comment="needs another look")

    assert _pub(engine) == "PENDING_MANAGER"
    (sent,) = _of(engine, ev.SentBack)
    assert (sent.step, sent.to_step) == ("finance", "manager")
    engine.decide("wf", "bob", "approve", "rq-3")
    assert _pub(engine) == "PENDING_FINANCE"


def test_a_repeated_request_id_is_applied_once(clock: FakeClock) -> None:
    defn = definition(approval("board", {"group": "board"}, mode="quorum", quorum=2))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="alice")

    engine.decide("wf", "ann", "approve", "rq-1")
    engine.decide("wf", "ann", "approve", "rq-1")

    assert len(_of(engine, ev.DecisionRecorded)) == 1


def test_all_mode_refuses_rules_that_name_too_few_different_people() -> None:
    # bob is both alice's manager and the only member of "leads": one person cannot
    # stand for two slots of an "all" step
    directory = StaticDirectory(managers={"alice": "bob"}, groups={"leads": ["bob"]})
    defn = definition(approval("both", {"manager": "submitter"}, {"group": "leads"}, mode="all"))
    engine = InMemoryEngine(defn, {}, FakeClock(), random.Random(1), directory)

    engine.start("wf", {}, submitter="alice")

    failed = [e for e in engine.events("wf") if isinstance(e, ev.StepFailed)]
    assert [(f.step, f.error) for f in failed] == [("both", "NoApprovers")]


def test_all_mode_places_a_shared_approver_on_the_slot_only_they_can_fill() -> None:
    # bob can fill slot 0 (manager) or slot 1 (leads: bob, carol); carol only slot 1
    directory = StaticDirectory(managers={"alice": "bob"}, groups={"leads": ["bob", "carol"]})
    defn = definition(approval("both", {"group": "leads"}, {"manager": "submitter"}, mode="all"))
    engine = InMemoryEngine(defn, {}, FakeClock(), random.Random(1), directory)
    engine.start("wf", {}, submitter="alice")

    engine.decide("wf", "bob", "approve", "r1")
    engine.decide("wf", "carol", "approve", "r2")

    assert engine.status("wf") == "COMPLETED"
