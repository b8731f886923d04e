"""An admin adds an approver to the approval step a running workflow waits in: the way
out of a request nobody can finish (its approvers left, or an escalation of the past
left nobody able to give the approvals it still needs). The command records
``ApproverAdded`` with who and why and opens a task for the person added; each
refusal says why and records nothing; the history replays."""

from __future__ import annotations

import random

import pytest

from templates_engine import (
    CANCELLED,
    COMPLETED,
    RUNNING,
    CommandRejected,
    Context,
    Definition,
    Delegation,
    StaticDirectory,
    decide,
    errors,
    replay,
)
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.admin_operations import NOT_ALLOWED
from templates_engine.events import Assignment, event_from_dict
from templates_engine.steps.approval import ALL_LEFT, NO_OPEN_TASK, TOO_FEW, unfinishable
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import action, approval, definition, drive

DIRECTORY = StaticDirectory(
    managers={"alice": "bob", "bob": "victor"}, users=frozenset({"carol", "olga", "dave"})
)


def _engine(clock: FakeClock, *steps: dict, **top: object) -> InMemoryEngine:
    defn = definition(*(steps or (approval("manager", {"manager": "submitter"}),)), **top)
    ok = lambda key, data: None  # noqa: E731
    return InMemoryEngine(defn, {"book": ok}, clock, random.Random(1), DIRECTORY)


def _replays(engine: InMemoryEngine, wid: str) -> None:
    stored = [event_from_dict(e.to_dict()) for e in engine.events(wid)]
    assert replay(engine.definition, stored) == engine.state(wid)


def test_an_added_approver_gets_a_task_beside_the_holders_and_can_finish_the_step(clock):
    engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")

    engine.operate("wf", cmd.AddApprover("olga", "carol", "manager", "Bob is on leave"))

    added = engine.events("wf")[-1]
    assert added == ev.ApproverAdded(
        "manager", "carol", "olga", "Bob is on leave", (Assignment("carol", 0),)
    )
    assert {a.user for a in engine.state("wf").outstanding()} == {"bob", "carol"}
    _replays(engine, "wf")
    engine.decide("wf", "carol", "approve", "r1")
    assert engine.status("wf") == COMPLETED


def test_in_mode_all_the_added_approver_stands_on_every_slot_still_open(clock):
    engine = _engine(
        clock, approval("review", {"user": "bob"}, {"user": "dave"}, {"user": "carol"}, mode="all")
    )
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "dave", "approve", "r1")

    engine.operate("wf", cmd.AddApprover("olga", "victor", "review", "speeds it up"))

    added = engine.events("wf")[-1]
    assert isinstance(added, ev.ApproverAdded)
    assert [a.slot for a in added.assignments] == [0, 2]
    _replays(engine, "wf")


def _stuck_by_the_old_escalation() -> tuple[Definition, list[ev.Event]]:
    """The history the escalation bug wrote (mode all, both late approvers' slots handed
    to their one manager, who approved one): nobody can give the other approval."""
    defn = definition(
        approval("review", {"user": "bob"}, {"user": "dave"}, mode="all", deadline="P2D")
    )
    timer = ev.Timer("review#1:deadline:0", "deadline", "review", 172_800.0)
    history: list[ev.Event] = [
        ev.WorkflowStarted("test-flow", 1, {}, "alice"),
        ev.ApprovalRequested(
            "review", (Assignment("bob", 0), Assignment("dave", 1)), 2, "all", 172_800.0, (timer,)
        ),
        ev.TimerFired("review", timer.key, "deadline"),
        ev.Escalated("review", timer.key, (Assignment("victor", 0), Assignment("victor", 1)), True),
        ev.DecisionRecorded("review", "victor", "approve", 0),
    ]
    return defn, history


def test_a_request_stuck_by_the_old_escalation_is_found_and_finished_by_an_added_approver():
    defn, history = _stuck_by_the_old_escalation()
    state = replay(defn, history)
    assert state.status == RUNNING and not state.outstanding()
    assert unfinishable(state, lambda user: True) == NO_OPEN_TASK
    ctx = Context(now=200_000.0, directory=DIRECTORY)

    added = decide(defn, state, cmd.AddApprover("olga", "carol", "review", "stuck"), ctx)
    state = replay(defn, [*history, *added])
    assert unfinishable(state, lambda user: True) is None
    done = decide(defn, state, cmd.Decide("carol", "approve"), ctx)

    assert replay(defn, [*history, *added, *done]).status == COMPLETED


def test_a_step_whose_holders_all_left_or_are_too_few_is_unfinishable(clock):
    engine = _engine(clock, approval("review", {"user": "bob"}, {"user": "dave"}, mode="all"))
    engine.start("wf", {}, submitter="alice")
    state = engine.state("wf")

    assert unfinishable(state, lambda user: True) is None
    # dave can act, but one person gives one approval of the two needed
    assert unfinishable(state, lambda user: user != "bob") == TOO_FEW
    assert unfinishable(state, lambda user: False) == ALL_LEFT


def test_a_request_waiting_in_no_approval_step_is_not_reported(clock):
    engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")
    engine.cancel("wf", "alice", "no longer needed")
    assert unfinishable(engine.state("wf"), lambda user: False) is None


REFUSALS = [
    (cmd.AddApprover("olga", "carol", "manager", "  "), "REASON_REQUIRED", "say why"),
    (cmd.AddApprover("olga", "zoe", "manager", "why"), errors.UNKNOWN_USER, "zoe is not an active"),
    (
        cmd.AddApprover("olga", "bob", "manager", "why"),
        errors.ALREADY_ASSIGNED,
        "bob already holds",
    ),
    (
        cmd.AddApprover("olga", "alice", "manager", "why"),
        errors.SEGREGATION_OF_DUTIES,
        "submitter of a workflow may not be given",
    ),
    (
        cmd.AddApprover("olga", "carol", "finance", "why"),
        NOT_ALLOWED,
        "does not wait in the Finance",
    ),
    (
        cmd.AddApprover("olga", "carol", "manager", "x" * 1001),
        errors.INVALID_COMMENT,
        "at most 1,000 characters",
    ),
]


@pytest.mark.parametrize(("command", "code", "words"), REFUSALS, ids=lambda x: str(x)[:30])
def test_each_refusal_says_why_and_records_nothing(clock, command, code, words):
    engine = _engine(
        clock,
        approval("manager", {"manager": "submitter"}),
        approval("finance", {"user": "dave"}),
    )
    engine.start("wf", {}, submitter="alice")
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match=words) as refused:
        engine.operate("wf", command)

    assert refused.value.code == code
    assert engine.events("wf") == before


def test_someone_who_already_approved_the_step_is_not_added_again(clock):
    engine = _engine(
        clock, approval("review", {"user": "bob"}, {"user": "dave"}, mode="quorum", quorum=2)
    )
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "r1")
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match="bob has already approved") as refused:
        engine.operate("wf", cmd.AddApprover("olga", "bob", "review", "why"))

    assert refused.value.code == errors.ALREADY_DECIDED
    assert engine.events("wf") == before


def test_four_eyes_refuses_someone_who_approved_another_step(clock):
    engine = _engine(
        clock,
        approval("manager", {"manager": "submitter"}),
        approval("finance", {"user": "dave"}),
        distinct_approvers=True,
    )
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "approve", "r1")

    with pytest.raises(
        CommandRejected, match="bob already approved manager of this workflow"
    ) as refused:
        engine.operate("wf", cmd.AddApprover("olga", "bob", "finance", "why"))
    assert refused.value.code == errors.SEGREGATION_OF_DUTIES


def test_a_finished_workflow_is_refused(clock):
    engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")
    engine.cancel("wf", "alice", "no longer needed")
    assert engine.status("wf") == CANCELLED
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match="has finished") as refused:
        engine.operate("wf", cmd.AddApprover("olga", "carol", "manager", "why"))
    assert refused.value.code == errors.WORKFLOW_FINISHED
    assert engine.events("wf") == before


def test_a_step_that_is_not_an_approval_step_is_refused(clock):
    class Hold:
        def __call__(self, key: str, data: dict) -> None:
            raise ConnectionError("down")

    defn = definition(
        action(
            "book",
            "book",
            retry={"max_attempts": 5, "initial_interval": "PT1H", "max_interval": "PT2H"},
        )
    )
    engine = InMemoryEngine(defn, {"book": Hold()}, clock, random.Random(1), DIRECTORY)
    engine.start("wf", {}, submitter="alice")
    engine.run("wf")  # the first attempt failed; the next waits an hour
    assert engine.state("wf").step == "book"
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match="not an approval step") as refused:
        engine.operate("wf", cmd.AddApprover("olga", "carol", "book", "why"))
    assert refused.value.code == NOT_ALLOWED
    assert engine.events("wf") == before


def test_the_submitters_changes_are_not_an_approval(clock):
    engine = _engine(clock)
    engine.start("wf", {}, submitter="alice")
    engine.decide("wf", "bob", "send_back", "r1", comment="add the receipt")
    assert drive(engine, "wf") == RUNNING

    with pytest.raises(CommandRejected, match="submitter's changes"):
        engine.operate("wf", cmd.AddApprover("olga", "carol", "manager", "why"))


def _away(clock: FakeClock, *pairs: tuple[str, str]) -> InMemoryEngine:
    """The manager step of Alice's request, with each (person, stand-in) of ``pairs``
    out of office now."""
    away = tuple(Delegation(who, stand_in, 0.0, 1e9) for who, stand_in in pairs)
    directory = StaticDirectory(
        managers=DIRECTORY.managers, users=DIRECTORY.users, delegations=away
    )
    defn = definition(approval("manager", {"manager": "submitter"}))
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), directory)
    engine.start("wf", {}, submitter="alice")
    return engine


def test_an_added_approver_who_is_away_has_the_task_held_by_their_stand_in(clock):
    engine = _away(clock, ("carol", "dave"))

    engine.operate("wf", cmd.AddApprover("olga", "carol", "manager", "Bob is on leave"))

    # recorded as on entering a step: Dave holds it for Carol
    added = engine.events("wf")[-1]
    assert added == ev.ApproverAdded(
        "manager", "carol", "olga", "Bob is on leave", (Assignment("dave", 0, "carol"),)
    )
    assert {(a.user, a.on_behalf_of) for a in engine.state("wf").outstanding()} == {
        ("bob", None),
        ("dave", "carol"),
    }
    _replays(engine, "wf")
    engine.decide("wf", "dave", "approve", "r1")
    decided = [e for e in engine.events("wf") if isinstance(e, ev.DecisionRecorded)]
    assert [(d.actor, d.on_behalf_of) for d in decided] == [("dave", "carol")]
    assert engine.status("wf") == COMPLETED


@pytest.mark.parametrize(
    ("stand_in", "excluded"),
    [("alice", True), ("olga", False), ("bob", False)],
    ids=["the-submitter", "the-admin-adding", "already-holds-a-task"],
)
def test_a_stand_in_who_may_not_hold_it_leaves_the_task_with_the_person_added(
    clock, stand_in, excluded
):
    engine = _away(clock, ("carol", stand_in))
    before = len(engine.events("wf"))

    engine.operate("wf", cmd.AddApprover("olga", "carol", "manager", "why"))

    new = engine.events("wf")[before:]
    assert new[-1] == ev.ApproverAdded("manager", "carol", "olga", "why", (Assignment("carol", 0),))
    # segregation of duties is recorded as it is when a step is entered
    assert new[:-1] == ([ev.ApproversExcluded("manager", (("alice", "submitter"),))] * excluded)
    _replays(engine, "wf")


def test_someone_whose_stand_in_already_holds_their_task_is_not_added_again(clock):
    engine = _away(clock, ("bob", "dave"))  # the step went to Dave for Bob
    assert [(a.user, a.on_behalf_of) for a in engine.state("wf").outstanding()] == [("dave", "bob")]
    before = engine.events("wf")

    with pytest.raises(CommandRejected, match="dave holds it for them") as refused:
        engine.operate("wf", cmd.AddApprover("olga", "bob", "manager", "why"))

    assert refused.value.code == errors.ALREADY_ASSIGNED
    assert engine.events("wf") == before
