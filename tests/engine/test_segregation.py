"""Segregation of duties: the submitter never decides their own workflow, whatever the
route to the task; with ``distinct_approvers`` one person never approves two steps; a
step whose approvers were all ruled out goes to its fallback, and the history says why."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from templates_engine import (
    COMPLETED,
    ROLLED_BACK,
    RUNNING,
    CommandRejected,
    Context,
    Definition,
    Delegation,
    StaticDirectory,
    decide,
    eligibility,
    errors,
    public_status,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.segregation import (
    ONE_STEP_EACH,
    SUBMITTER_MAY_NOT_DECIDE,
    SUBMITTER_MAY_NOT_HOLD,
)
from templates_engine.snapshot import SNAPSHOT_VERSION, state_from_dict, state_to_dict
from templates_engine.state import State, evolve
from templates_engine.steps.approval import NO_ELIGIBLE_APPROVERS, NOT_WAITING_FOR
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import approval, definition, expense, expense_document

DAY = 86_400.0
DIRECTORY = StaticDirectory(
    managers={
        "alice": "bob",
        "bob": "victor",
        "fiona": "victor",
        "frank": "fiona",
        "ivan": "victor",
        "ann": "carl",
        "selma": "selma",  # runs the company: her own manager in the directory
    },
    groups={
        "finance": ["fiona", "frank"],
        "solo": ["fiona"],
        "board": ["ann", "ben", "cat"],
        "it-admins": ["ivan"],
    },
    users=frozenset({"zoe", "admin"}),
)
BOSS = {"manager": "submitter"}
SUBMITTER = "submitter"


def _engine(
    defn: Definition, clock: FakeClock, directory: StaticDirectory = DIRECTORY
) -> InMemoryEngine:
    return InMemoryEngine(defn, {}, clock, random.Random(3), directory)


def _with(*delegations: Delegation) -> StaticDirectory:
    return StaticDirectory(
        DIRECTORY.managers, DIRECTORY.groups, DIRECTORY.users, delegations=delegations
    )


def _of(engine: InMemoryEngine, kind: type[ev.Event]) -> list[Any]:
    return [e for e in engine.events("wf") if isinstance(e, kind)]


def _types(engine: InMemoryEngine) -> list[str]:
    return [e.type for e in engine.events("wf")]


def _refused(engine: InMemoryEngine, actor: str, decision: str, **kw: Any) -> CommandRejected:
    """Assert the decision is refused for segregation of duties and changes nothing."""
    before = engine.events("wf")
    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", actor, decision, f"rq-{len(before)}-{actor}", **kw)
    assert caught.value.code == errors.SEGREGATION_OF_DUTIES
    assert engine.events("wf") == before
    return caught.value


def _not_theirs(engine: InMemoryEngine, actor: str, decision: str, step: str) -> None:
    """Assert the decision is refused as not the actor's step (NOT_YOUR_STEP, naming the
    ``step`` the workflow waits for), before segregation of duties is asked, and changes
    nothing."""
    before = engine.events("wf")
    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", actor, decision, f"rq-{len(before)}-{actor}")
    assert caught.value.code == errors.NOT_YOUR_STEP
    assert caught.value.message == NOT_WAITING_FOR.format(step=step)
    assert engine.events("wf") == before


def _command_refused(engine: InMemoryEngine, command: cmd.Command) -> CommandRejected:
    """Assert the decider refuses ``command`` for segregation of duties."""
    ctx = Context(now=engine.clock.now(), directory=engine.directory)
    with pytest.raises(CommandRejected) as caught:
        decide(engine.definition, engine.state("wf"), command, ctx)
    assert caught.value.code == errors.SEGREGATION_OF_DUTIES
    return caught.value


# -- the submitter, through every route -------------------------------------------


@pytest.mark.parametrize(
    ("step", "submitter", "holder", "fallback"),
    [
        pytest.param(approval("a", {"group": "finance"}), "fiona", "frank", False, id="group"),
        pytest.param(approval("a", {"group": "solo"}), "fiona", "victor", True, id="only-member"),
        pytest.param(approval("a", {"user": "fiona"}), "fiona", "victor", True, id="named-user"),
        pytest.param(
            approval("a", BOSS, fallback=[{"user": "zoe"}]),
            "selma",
            "zoe",
            True,
            id="own-manager",
        ),
    ],
)
def test_the_submitter_is_never_assigned_whatever_the_rule(
    clock: FakeClock, step: dict[str, Any], submitter: str, holder: str, fallback: bool
) -> None:
    # given
    engine = _engine(definition(step), clock)

    # when
    engine.start("wf", {}, submitter=submitter)

    # then: the submitter is left out, and the history says so before the request
    assert engine.state("wf").assignments == (ev.Assignment(holder, 0),)
    assert _types(engine)[-2:] == ["ApproversExcluded", "ApprovalRequested"]
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded("a", ((submitter, SUBMITTER),), fallback)
    _not_theirs(engine, submitter, "approve", "A")
    engine.decide("wf", holder, "approve", "rq-ok")
    assert engine.status("wf") == COMPLETED


def test_a_step_nobody_is_excluded_from_records_no_exclusion(clock: FakeClock) -> None:
    engine = _engine(definition(approval("a", {"group": "finance"})), clock)

    engine.start("wf", {}, submitter="alice")

    assert _of(engine, ev.ApproversExcluded) == []
    assert {a.user for a in engine.state("wf").assignments} == {"fiona", "frank"}


@pytest.mark.parametrize("decision", ["approve", "reject", "send_back", "delegate"])
def test_the_submitter_is_refused_even_when_a_history_assigned_her(
    clock: FakeClock, decision: str
) -> None:
    # given: a history recorded before the rule, in which alice holds her own step
    defn = definition(approval("a", {"user": "alice"}))
    history: list[ev.Event] = [
        ev.WorkflowStarted("test-flow", 1, {}, "alice"),
        ev.ApprovalRequested("a", (ev.Assignment("alice", 0),), 1, "any", None),
    ]
    state = replay(defn, history)
    ctx = Context(now=clock.now(), directory=DIRECTORY)

    # when
    with pytest.raises(CommandRejected) as caught:
        decide(defn, state, cmd.Decide("alice", decision, delegate_to="zoe"), ctx)

    # then
    assert caught.value.code == errors.SEGREGATION_OF_DUTIES
    assert caught.value.message == SUBMITTER_MAY_NOT_DECIDE


def test_an_out_of_office_delegation_to_the_submitter_leaves_the_task_where_it_was(
    clock: FakeClock,
) -> None:
    # given: bob is away and alice, who submits, stands in for him
    away = Delegation("bob", "alice", clock.now() - 10, clock.now() + DAY)
    engine = _engine(definition(approval("manager", BOSS)), clock, _with(away))

    # when
    engine.start("wf", {}, submitter="alice")

    # then: bob keeps his task; alice may not take it up on his behalf
    assert engine.state("wf").assignments == (ev.Assignment("bob", 0),)
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded("manager", (("alice", SUBMITTER),), False)
    _refused(engine, "alice", "approve", on_behalf_of="bob")
    _not_theirs(engine, "alice", "approve", "Manager")
    engine.decide("wf", "bob", "approve", "rq-1")
    (recorded,) = _of(engine, ev.DecisionRecorded)
    assert (recorded.actor, recorded.on_behalf_of) == ("bob", None)
    assert engine.status("wf") == COMPLETED


def test_nobody_decides_on_behalf_of_the_submitter(clock: FakeClock) -> None:
    # given: alice is away and bob stands in for her, on a workflow she submitted
    away = Delegation("alice", "bob", clock.now() - 10, clock.now() + DAY)
    engine = _engine(definition(approval("manager", BOSS)), clock, _with(away))
    engine.start("wf", {}, submitter="alice")

    # when / then
    refusal = _refused(engine, "bob", "approve", on_behalf_of="alice")
    assert refusal.message == SUBMITTER_MAY_NOT_DECIDE
    assert engine.status("wf") == RUNNING


@pytest.mark.parametrize(
    ("fields", "kept"),
    [
        pytest.param({}, ["frank"], id="manager-of-assignee-reassign"),
        pytest.param({"escalation": "add"}, ["frank"], id="manager-of-assignee-add"),
        pytest.param({"escalate_to": {"user": "fiona"}}, ["frank"], id="named-user"),
        pytest.param(
            {"escalate_to": {"group": "finance"}, "escalation": "add"}, ["frank"], id="group-add"
        ),
    ],
)
def test_an_escalation_never_reaches_the_submitter(
    clock: FakeClock, fields: dict[str, Any], kept: list[str]
) -> None:
    # given: fiona submits; frank holds the finance step, and fiona is his manager
    defn = definition(approval("finance", {"group": "finance"}, deadline="P2D", **fields))
    engine = _engine(defn, clock)
    engine.start("wf", {}, submitter="fiona")

    # when
    clock.advance(2 * DAY)
    engine.run("wf")

    # then: the escalation names nobody new, and frank keeps the task
    assert _types(engine)[-2:] == ["ApproversExcluded", "Escalated"]
    excluded = _of(engine, ev.ApproversExcluded)[-1]
    assert excluded == ev.ApproversExcluded("finance", (("fiona", SUBMITTER),), False)
    (escalated,) = _of(engine, ev.Escalated)
    assert escalated.assignments == ()
    assert [a.user for a in engine.state("wf").assignments] == kept
    _not_theirs(engine, "fiona", "approve", "Finance")


def test_an_approver_cannot_delegate_the_task_to_the_submitter(clock: FakeClock) -> None:
    # given
    engine = _engine(definition(approval("manager", BOSS)), clock)
    engine.start("wf", {}, submitter="alice")

    # when / then
    refusal = _refused(engine, "bob", "delegate", delegate_to="alice")
    assert refusal.message == SUBMITTER_MAY_NOT_HOLD
    assert engine.state("wf").assignments == (ev.Assignment("bob", 0),)


def test_an_administrator_cannot_reassign_the_task_to_the_submitter(clock: FakeClock) -> None:
    # given
    engine = _engine(definition(approval("manager", BOSS)), clock)
    engine.start("wf", {}, submitter="alice")

    # when / then
    refusal = _command_refused(engine, cmd.Reassign("admin", "bob", "alice"))
    assert refusal.message == SUBMITTER_MAY_NOT_HOLD
    ctx = Context(now=clock.now(), directory=DIRECTORY)
    moved = decide(engine.definition, engine.state("wf"), cmd.Reassign("admin", "bob", "zoe"), ctx)
    assert [e.type for e in moved] == ["TaskReassigned"]


# -- the fallback -------------------------------------------------------------------


def test_the_fallback_rules_win_over_the_submitters_manager(clock: FakeClock) -> None:
    # given
    step = approval("a", {"group": "solo"}, fallback=[{"group": "board"}, {"user": "zoe"}])
    engine = _engine(definition(step), clock)

    # when
    engine.start("wf", {}, submitter="fiona")

    # then
    assert {a.user for a in engine.state("wf").assignments} == {"ann", "ben", "cat", "zoe"}
    assert "victor" not in {a.user for a in engine.state("wf").assignments}
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded.fallback is True


@pytest.mark.parametrize(
    ("step", "submitter"),
    [
        pytest.param(
            approval("a", {"user": "fiona"}, fallback=[{"group": "solo"}]),
            "fiona",
            id="fallback-is-the-submitter",
        ),
        pytest.param(approval("a", BOSS), "selma", id="own-manager-without-fallback"),
        pytest.param(approval("a", {"user": "zoe"}), "zoe", id="submitter-without-a-manager"),
    ],
)
def test_a_fallback_that_names_nobody_eligible_fails_the_step(
    clock: FakeClock, step: dict[str, Any], submitter: str
) -> None:
    # given
    engine = _engine(definition(step), clock)

    # when
    engine.start("wf", {}, submitter=submitter)

    # then: the history says who was ruled out, then why the step failed
    assert _types(engine)[1:] == [
        "ApproversExcluded",
        "StepFailed",
        "CompensationStarted",
        "WorkflowRolledBack",
    ]
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded("a", ((submitter, SUBMITTER),), True)
    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.error, failed.message) == ("NoApprovers", NO_ELIGIBLE_APPROVERS)
    assert engine.status("wf") == ROLLED_BACK


def test_quorum_counts_only_eligible_people_then_falls_back(clock: FakeClock) -> None:
    # given: ann sits on the board and submits
    two = definition(approval("board", {"group": "board"}, mode="quorum", quorum=2))
    three = definition(approval("board", {"group": "board"}, mode="quorum", quorum=3))
    engine_two, engine_three = _engine(two, clock), _engine(three, clock)

    # when
    engine_two.start("wf", {}, submitter="ann")
    engine_three.start("wf", {}, submitter="ann")

    # then: two of three is still possible without her; three of three needs carl
    assert {a.user for a in engine_two.state("wf").assignments} == {"ben", "cat"}
    assert _of(engine_two, ev.ApproversExcluded)[0].fallback is False
    assert {a.user for a in engine_three.state("wf").assignments} == {"ben", "cat", "carl"}
    assert _of(engine_three, ev.ApproversExcluded)[0].fallback is True
    for i, user in enumerate(["ben", "cat", "carl"]):
        engine_three.decide("wf", user, "approve", f"rq-{i}")
    assert engine_three.status("wf") == COMPLETED


@pytest.mark.parametrize(
    ("fallback", "holders", "status"),
    [
        pytest.param([{"user": "zoe"}], [("victor", 0), ("zoe", 1)], RUNNING, id="explicit"),
        # victor would have to fill both slots: one person counts once in mode all
        pytest.param(None, [], ROLLED_BACK, id="manager-already-on-the-other-slot"),
    ],
)
def test_mode_all_falls_back_on_the_slot_the_submitter_left(
    clock: FakeClock, fallback: list[dict[str, str]] | None, holders: list[Any], status: str
) -> None:
    # given: ivan, the only IT admin, asks for hardware that needs his manager and IT
    extra = {} if fallback is None else {"fallback": fallback}
    step = approval("review", BOSS, {"group": "it-admins"}, mode="all", **extra)
    engine = _engine(definition(step), clock)

    # when
    engine.start("wf", {}, submitter="ivan")

    # then
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded("review", (("ivan", SUBMITTER),), True)
    assert [(a.user, a.slot) for a in engine.state("wf").assignments] == holders
    assert engine.status("wf") == status
    if status == RUNNING:
        engine.decide("wf", "victor", "approve", "rq-1")
        engine.decide("wf", "zoe", "approve", "rq-2")
        assert engine.status("wf") == COMPLETED


# -- four eyes ----------------------------------------------------------------------

FOUR_EYES = StaticDirectory(
    managers={"alice": "victor", "fiona": "victor", "dave": "erin"},
    groups={"finance": ["victor", "fiona"]},
    users=frozenset({"zoe", "admin", "bob"}),
)


def _four_eyes(clock: FakeClock, *delegations: Delegation, **top: Any) -> InMemoryEngine:
    defn = definition(approval("manager", BOSS), approval("finance", {"group": "finance"}), **top)
    directory = StaticDirectory(
        FOUR_EYES.managers, FOUR_EYES.groups, FOUR_EYES.users, delegations=delegations
    )
    return _engine(defn, clock, directory)


def test_one_person_does_not_approve_two_steps(clock: FakeClock) -> None:
    # given: victor is alice's manager and sits in finance
    engine = _four_eyes(clock, distinct_approvers=True)
    engine.start("wf", {}, submitter="alice")

    # when
    engine.decide("wf", "victor", "approve", "rq-1")

    # then: finance goes to fiona alone, and the history says why
    assert public_status(engine.state("wf")) == "PENDING_FINANCE"
    assert engine.state("wf").assignments == (ev.Assignment("fiona", 0),)
    assert _types(engine)[-2:] == ["ApproversExcluded", "ApprovalRequested"]
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded(
        "finance", (("victor", "already approved manager"),), False
    )
    _not_theirs(engine, "victor", "approve", "Finance")
    engine.decide("wf", "fiona", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED


def test_without_distinct_approvers_one_person_may_approve_two_steps(clock: FakeClock) -> None:
    engine = _four_eyes(clock)
    engine.start("wf", {}, submitter="alice")

    engine.decide("wf", "victor", "approve", "rq-1")
    engine.decide("wf", "victor", "approve", "rq-2")

    assert _of(engine, ev.ApproversExcluded) == []
    assert engine.status("wf") == COMPLETED


def test_four_eyes_is_checked_again_at_decision_time(clock: FakeClock) -> None:
    # given: fiona holds finance; from an hour after it began, victor stands in for her
    later = Delegation("fiona", "victor", clock.now() + 3_600, clock.now() + DAY)
    engine = _four_eyes(clock, later, distinct_approvers=True)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "victor", "approve", "rq-1")
    clock.advance(3_600)

    # when / then: he slipped through the delegation, and is refused all the same
    _refused(engine, "victor", "approve", on_behalf_of="fiona")
    _refused(engine, "victor", "reject", on_behalf_of="fiona")
    assert engine.status("wf") == RUNNING


def test_four_eyes_refuses_a_holder_a_history_assigned(clock: FakeClock) -> None:
    # given: a history in which victor approved the manager step and then got finance
    defn = definition(
        approval("manager", BOSS),
        approval("finance", {"group": "finance"}),
        distinct_approvers=True,
    )
    history: list[ev.Event] = [
        ev.WorkflowStarted("test-flow", 1, {}, "alice"),
        ev.ApprovalRequested("manager", (ev.Assignment("victor", 0),), 1, "any", None),
        ev.DecisionRecorded("manager", "victor", "approve", 0),
        ev.StepCompleted("manager"),
        ev.ApprovalRequested("finance", (ev.Assignment("victor", 0),), 1, "any", None),
    ]
    ctx = Context(now=clock.now(), directory=FOUR_EYES)

    # when
    with pytest.raises(CommandRejected) as caught:
        decide(defn, replay(defn, history), cmd.Decide("victor", "approve"), ctx)

    # then
    assert caught.value.code == errors.SEGREGATION_OF_DUTIES


def test_a_principal_a_delegate_approved_for_counts_as_having_approved(clock: FakeClock) -> None:
    # given: victor is away when the manager step begins, and zoe holds it for him
    away = Delegation("victor", "zoe", clock.now() - 10, clock.now() + 60)
    engine = _four_eyes(clock, away, distinct_approvers=True)
    engine.start("wf", {}, submitter="alice")
    assert engine.state("wf").assignments == (ev.Assignment("zoe", 0, "victor"),)

    # when
    clock.advance(60)
    engine.decide("wf", "zoe", "approve", "rq-1")

    # then: victor approved through zoe, so he does not get finance either
    assert engine.state("wf").step_approvals == (("manager", "zoe"), ("manager", "victor"))
    assert engine.state("wf").assignments == (ev.Assignment("fiona", 0),)
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded.excluded == (("victor", "already approved manager"),)


def test_four_eyes_refuses_a_delegation_or_reassignment_to_an_earlier_approver(
    clock: FakeClock,
) -> None:
    # given
    engine = _four_eyes(clock, distinct_approvers=True)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "victor", "approve", "rq-1")

    # when / then
    refusal = _refused(engine, "fiona", "delegate", delegate_to="victor")
    assert refusal.message == ONE_STEP_EACH.format(user="victor", step="manager")
    _command_refused(engine, cmd.Reassign("admin", "fiona", "victor"))
    engine.decide("wf", "fiona", "delegate", "rq-2", delegate_to="zoe")
    assert engine.state("wf").assignments == (ev.Assignment("zoe", 0, "fiona"),)


def test_after_a_send_back_the_same_person_decides_the_same_step_again(clock: FakeClock) -> None:
    # given: finance can send the claim back to the manager step
    defn = definition(
        approval("manager", BOSS),
        approval("finance", {"user": "fiona"}, send_back_to="manager"),
        distinct_approvers=True,
    )
    engine = _engine(defn, clock, FOUR_EYES)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "victor", "approve", "rq-1")

    # when
    engine.decide("wf", "fiona", "send_back", "rq-2", comment="which project?")

    # then: the manager step is victor's again, and he may approve it again
    assert public_status(engine.state("wf")) == "PENDING_MANAGER"
    assert engine.state("wf").assignments == (ev.Assignment("victor", 0),)
    assert _of(engine, ev.ApproversExcluded) == []
    engine.decide("wf", "victor", "approve", "rq-3")
    engine.decide("wf", "fiona", "approve", "rq-4")
    assert engine.status("wf") == COMPLETED
    assert engine.state("wf").step_approvals == (("manager", "victor"), ("finance", "fiona"))


def test_the_demo_expense_definition_keeps_four_eyes(clock: FakeClock) -> None:
    # given: victor manages fiona and is in finance; fiona claims a large expense
    directory = StaticDirectory(
        managers={"fiona": "victor"}, groups={"finance": ["fiona", "frank", "victor"]}
    )
    engine = _engine(Definition.parse(expense_document()), clock, directory)
    engine.start("wf", expense(4_500_000), submitter="fiona")

    # when
    engine.decide("wf", "victor", "approve", "rq-1")

    # then
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded(
        "finance", (("fiona", SUBMITTER), ("victor", "already approved manager")), False
    )
    assert engine.state("wf").assignments == (ev.Assignment("frank", 0),)


# -- eligibility, replay, snapshots -------------------------------------------------


def test_eligibility_answers_without_emitting(clock: FakeClock) -> None:
    # given
    engine = _four_eyes(clock, distinct_approvers=True)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "victor", "approve", "rq-1")
    defn, state = engine.definition, engine.state("wf")
    events = engine.events("wf")

    # when / then
    assert eligibility(defn, state, "alice") == SUBMITTER
    assert eligibility(defn, state, "victor") == "already approved manager"
    assert eligibility(defn, state, "victor", "manager") is None
    assert eligibility(defn, state, "fiona") is None
    assert eligibility(definition(approval("a", BOSS)), state, "victor") is None
    assert engine.events("wf") == events


def test_eligibility_lets_the_submitter_answer_a_send_back(clock: FakeClock) -> None:
    engine = _engine(definition(approval("manager", BOSS)), clock)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "send_back", "rq-1", comment="needs another look")

    assert public_status(engine.state("wf")) == "PENDING_SUBMITTER"
    assert eligibility(engine.definition, engine.state("wf"), "alice") is None
    engine.decide("wf", "alice", "approve", "rq-2")
    assert public_status(engine.state("wf")) == "PENDING_MANAGER"


def _segregated_run(clock: FakeClock) -> InMemoryEngine:
    engine = _four_eyes(clock, distinct_approvers=True)
    engine.start("wf", {}, submitter="fiona")
    return engine


def test_a_history_with_exclusions_replays_to_the_same_state(clock: FakeClock) -> None:
    # given: fiona submits; victor approves as her manager, so finance has nobody left
    # but its fallback, her manager victor again: the step fails
    engine = _segregated_run(clock)
    engine.decide("wf", "victor", "approve", "rq-1")
    assert engine.status("wf") == ROLLED_BACK

    # when: the history is stored as JSON and read back
    stored = json.loads(json.dumps([e.to_dict() for e in engine.events("wf")]))
    events = [ev.event_from_dict(doc) for doc in stored]

    # then
    assert events == engine.events("wf")
    assert replay(engine.definition, events) == engine.state("wf")
    (excluded,) = [e for e in events if isinstance(e, ev.ApproversExcluded)]
    assert excluded.excluded == (("victor", "already approved manager"), ("fiona", SUBMITTER))
    assert excluded.fallback is True


def test_the_snapshot_keeps_who_approved_which_step(clock: FakeClock) -> None:
    # given
    engine = _four_eyes(clock, distinct_approvers=True)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "victor", "approve", "rq-1")
    state = engine.state("wf")
    assert state.step_approvals == (("manager", "victor"),)

    # when
    again = state_from_dict(json.loads(json.dumps(state_to_dict(state))))

    # then
    assert again == state
    assert again is not None and eligibility(engine.definition, again, "victor") is not None


def test_a_snapshot_of_the_previous_shape_is_read_as_missing() -> None:
    old = state_to_dict(State()) | {"snapshot_version": SNAPSHOT_VERSION - 1}
    del old["step_approvals"]

    assert state_from_dict(old) is None


def test_only_approvals_are_remembered_for_four_eyes() -> None:
    state = evolve(State(), ev.WorkflowStarted("t", 1, {}, "alice"))
    for event in [
        ev.ApprovalRequested("a", (ev.Assignment("bob", 0),), 1, "any", None),
        ev.DecisionRecorded("a", "bob", "send_back", 0),
        ev.ApproversExcluded("a", (("alice", SUBMITTER),)),
    ]:
        state = evolve(state, event)

    assert state.step_approvals == ()


def test_a_recorded_history_with_exclusions_replays_who_approved_what() -> None:
    # given: fiona's claim, recorded; finance went to frank, not to her nor to victor
    path = Path(__file__).parent / "histories" / "four_eyes_expense.json"
    doc = json.loads(path.read_text())
    defn = Definition.parse(doc["definition"])

    # when
    state = replay(defn, [ev.event_from_dict(e) for e in doc["events"]])

    # then
    assert defn.distinct_approvers is True
    assert state.status == COMPLETED
    assert state.step_approvals == (("manager", "victor"), ("finance", "frank"))
    assert eligibility(defn, state, "victor", "finance") == "already approved manager"
    assert eligibility(defn, state, "fiona", "finance") == SUBMITTER
