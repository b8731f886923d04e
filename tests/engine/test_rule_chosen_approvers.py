"""Approvers chosen by rules on the data, deciding in parallel: an approval step's
entries may each carry a ``when``; the step's mode applies to the people the entries
that hold resolve to, with segregation of duties and delegation applied to each."""

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
    Definition,
    Delegation,
    StaticDirectory,
    errors,
    public_status,
    replay,
)
from templates_engine import events as ev
from templates_engine.errors import DefinitionError
from templates_engine.expression_limits import MAX_LENGTH, TOO_LONG
from templates_engine.references import FIELD, Reference, references
from templates_engine.segregation import SUBMITTER
from templates_engine.snapshot import state_to_dict
from templates_engine.steps.approval import (
    NO_ELIGIBLE_APPROVERS,
    NO_RULE_APPLIES,
    QUORUM_OVER_RULES,
    QUORUM_SHORT,
    RULE_SHAPE,
)
from templates_engine.testing import FakeClock, InMemoryEngine

from .support import approval, definition

DIRECTORY = StaticDirectory(
    managers={"alice": "bob", "bob": "carol", "victor": "cora"},
    groups={"finance": ["fiona", "frank"], "owners": ["olga"]},
    users=frozenset({"victor", "zoe"}),
)
BIG = "data.amountPaise > 50000000"  # above ₹5,00,000
OWNER = {"group": "owners"}
BOSS = {"manager": "submitter"}
CFO = {"user": "victor", "when": BIG}
LARGE, SMALL = {"amountPaise": 60_000_000}, {"amountPaise": 1_000_000}
HISTORY = Path(__file__).parent / "histories" / "rule_chosen_approvers_in_parallel.json"


def _engine(defn: Definition, directory: StaticDirectory = DIRECTORY) -> InMemoryEngine:
    return InMemoryEngine(defn, {}, FakeClock(1_000.0), random.Random(3), directory)


def _of(engine: InMemoryEngine, kind: type[ev.Event]) -> list[Any]:
    return [e for e in engine.events("wf") if isinstance(e, kind)]


def _asked(engine: InMemoryEngine) -> set[tuple[str, int]]:
    return {(a.user, a.slot) for a in engine.state("wf").assignments}


def _refused(engine: InMemoryEngine, actor: str, *codes: str) -> None:
    """The decision is refused with one of ``codes`` and changes nothing."""
    before = engine.events("wf")
    with pytest.raises(CommandRejected) as caught:
        engine.decide("wf", actor, "approve", f"rq-{actor}-{len(before)}")
    assert caught.value.code in codes
    assert engine.events("wf") == before


# -- parsing ---------------------------------------------------------------------------


def test_an_approver_entry_keeps_its_condition_compiled_and_in_its_document() -> None:
    step = definition(approval("sign", OWNER, CFO, mode="all")).steps[0]

    rule = step.approvers[1]  # type: ignore[attr-defined]

    assert rule.when is not None and rule.when.evaluate(LARGE, "alice") is True
    assert rule.to_dict() == CFO
    assert step.conditions()[0].source == BIG


@pytest.mark.parametrize(
    ("entry", "path", "problem"),
    [
        pytest.param(
            {"user": "victor", "when": "data.amountPaise >"},
            "$.steps[0].approvers[0].when",
            "condition does not compile",
            id="does-not-compile",
        ),
        pytest.param(
            {"user": "victor", "when": "data.x == 1 || " * 80 + "true"},
            "$.steps[0].approvers[0].when",
            f"condition {TOO_LONG}",
            id="past-the-length-every-condition-respects",
        ),
        pytest.param(
            {"user": "victor", "when": "  "},
            "$.steps[0].approvers[0].when",
            "must be a non-empty CEL expression",
            id="empty",
        ),
        pytest.param(
            {"when": BIG}, "$.steps[0].approvers[0]", RULE_SHAPE, id="a-condition-and-no-rule"
        ),
    ],
)
def test_an_approver_condition_is_held_to_the_rules_of_every_condition(
    entry: dict[str, Any], path: str, problem: str
) -> None:
    assert len("data.x == 1 || " * 80) > MAX_LENGTH
    with pytest.raises(DefinitionError) as refused:
        definition(approval("sign", entry))

    assert refused.value.path == path
    assert refused.value.problem.startswith(problem)


def test_only_the_approvers_list_takes_conditions_not_the_fallback_or_escalation() -> None:
    for field in ("fallback", "escalate_to"):
        value = [CFO] if field == "fallback" else CFO
        with pytest.raises(DefinitionError) as refused:
            definition(approval("sign", OWNER, **{field: value}))
        assert refused.value.path.startswith(f"$.steps[0].{field}")


def test_a_quorum_the_rules_can_never_reach_is_refused_when_the_definition_is_parsed() -> None:
    # at most bob (the manager) and victor, even with every condition holding
    with pytest.raises(DefinitionError) as refused:
        definition(approval("sign", BOSS, CFO, {"user": "victor"}, mode="quorum", quorum=3))

    assert refused.value.path == "$.steps[0].quorum"
    assert refused.value.problem == QUORUM_OVER_RULES.format(quorum=3, most=2)


def test_a_quorum_over_a_group_is_left_to_the_directory() -> None:
    parsed = definition(approval("sign", {"group": "finance"}, CFO, mode="quorum", quorum=5))

    assert parsed.steps[0].quorum == 5  # type: ignore[attr-defined]


def test_the_fields_an_approver_condition_reads_are_listed_as_a_step_condition_s_are() -> None:
    doc = {
        "key": "k",
        "steps": [approval("sign", OWNER, {"user": "victor", "when": 'data["vendor"] == "x"'})],
    }

    found = list(references(doc))

    assert Reference("$.steps[0].approvers[1].when", FIELD, "vendor") in found
    assert Reference("$.steps[0].approvers[1].user", "user", "victor") in found


def test_data_too_large_for_a_walking_approver_condition_is_refused_at_the_start() -> None:
    walks = {"user": "victor", "when": "data.lines.all(a, data.lines.all(b, a <= b))"}
    parsed = definition(approval("sign", OWNER, walks))

    problems = parsed.data_errors({"lines": list(range(500))})

    assert problems and "too many for the rule" in problems[0]


# -- modes over the resolved set ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "asked"),
    [
        (LARGE, {("olga", 0), ("bob", 1), ("fiona", 2), ("frank", 2), ("victor", 3)}),
        (SMALL, {("olga", 0), ("bob", 1), ("fiona", 2), ("frank", 2)}),
    ],
    ids=["condition-true", "condition-false"],
)
def test_mode_any_asks_a_mixed_set_at_once_and_one_approval_completes(
    data: dict[str, Any], asked: set[tuple[str, int]]
) -> None:
    # given: a group, the manager, another group and a rule-chosen person
    engine = _engine(definition(approval("sign", OWNER, BOSS, {"group": "finance"}, CFO)))

    # when
    engine.start("wf", data, submitter="alice")

    # then
    assert _asked(engine) == asked
    if ("victor", 3) not in asked:
        _refused(engine, "victor", errors.NOT_YOUR_STEP)
    engine.decide("wf", "frank", "approve", "rq-1")
    assert engine.status("wf") == COMPLETED


def test_mode_all_above_the_amount_needs_the_owner_and_the_rule_chosen_cfo_in_any_order() -> None:
    # given
    engine = _engine(definition(approval("sign", OWNER, CFO, mode="all")))
    engine.start("wf", LARGE, submitter="alice")
    assert engine.state("wf").required == 2

    # when: the CFO signs first, in parallel with the owner
    engine.decide("wf", "victor", "approve", "rq-1")

    # then
    assert engine.status("wf") == RUNNING
    assert {a.user for a in engine.state("wf").outstanding()} == {"olga"}
    engine.decide("wf", "olga", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED


def test_mode_all_below_the_amount_needs_only_the_entries_that_apply() -> None:
    engine = _engine(definition(approval("sign", OWNER, CFO, mode="all")))
    engine.start("wf", SMALL, submitter="alice")

    assert engine.state("wf").required == 1
    assert _asked(engine) == {("olga", 0)}
    engine.decide("wf", "olga", "approve", "rq-1")
    assert engine.status("wf") == COMPLETED


def test_mode_all_places_a_shared_approver_on_the_slot_only_they_can_fill_when_slots_skip() -> None:
    # given: entry 0 does not apply; bob is on slot 1 (leads) and slot 2 (manager),
    # carol only on slot 1, so bob's approval must count for slot 2
    directory = StaticDirectory(managers={"alice": "bob"}, groups={"leads": ["bob", "carol"]})
    step = approval("both", {"user": "victor", "when": "false"}, {"group": "leads"}, BOSS)
    engine = _engine(definition({**step, "mode": "all"}), directory)
    engine.start("wf", {}, submitter="alice")

    # when
    engine.decide("wf", "bob", "approve", "rq-1")

    # then
    assert [(d.actor, d.slot) for d in _of(engine, ev.DecisionRecorded)] == [("bob", 2)]
    assert {a.user for a in engine.state("wf").outstanding()} == {"carol"}
    engine.decide("wf", "carol", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED


@pytest.mark.parametrize(
    ("data", "asked_users"),
    [(LARGE, {"bob", "fiona", "frank", "victor"}), (SMALL, {"bob", "fiona", "frank"})],
    ids=["condition-true", "condition-false"],
)
def test_quorum_counts_different_people_of_the_resolved_set(
    data: dict[str, Any], asked_users: set[str]
) -> None:
    # given
    step = approval("sign", BOSS, {"group": "finance"}, CFO, mode="quorum", quorum=3)
    engine = _engine(definition(step))
    engine.start("wf", data, submitter="alice")
    assert {a.user for a in engine.state("wf").assignments} == asked_users

    # when
    engine.decide("wf", "bob", "approve", "rq-1")
    engine.decide("wf", "fiona", "approve", "rq-2")

    # then
    assert engine.status("wf") == RUNNING
    engine.decide("wf", "frank", "approve", "rq-3")
    assert engine.status("wf") == COMPLETED


def test_a_quorum_larger_than_the_resolved_set_fails_the_step_rather_than_shrinking() -> None:
    # given: two different people are needed; below the amount only bob is named
    engine = _engine(definition(approval("sign", BOSS, CFO, mode="quorum", quorum=2)))

    # when
    engine.start("wf", SMALL, submitter="alice")

    # then
    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.error, failed.message) == (
        "NoApprovers",
        QUORUM_SHORT.format(required=2, found=1),
    )
    assert engine.status("wf") == ROLLED_BACK


def test_a_step_whose_every_condition_is_false_fails_as_a_step_with_no_approvers() -> None:
    # given
    step = approval("sign", CFO, {"group": "finance", "when": "data.amountPaise > 90000000"})
    engine = _engine(definition(step))

    # when
    engine.start("wf", SMALL, submitter="alice")

    # then: as a step whose rules name nobody (no fallback: nobody was ruled out)
    assert [type(e).__name__ for e in engine.events("wf")][1:] == [
        "StepFailed",
        "CompensationStarted",
        "WorkflowRolledBack",
    ]
    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.error, failed.message) == ("NoApprovers", NO_RULE_APPLIES)


def test_an_approver_condition_that_cannot_be_evaluated_fails_the_step() -> None:
    engine = _engine(definition(approval("sign", OWNER, {"user": "victor", "when": "data.x > 1"})))

    engine.start("wf", {}, submitter="alice")

    (failed,) = _of(engine, ev.StepFailed)
    assert failed.error == "ConditionError"
    assert engine.status("wf") == ROLLED_BACK


# -- segregation of duties and delegation ------------------------------------------------


def test_the_submitter_is_left_out_of_a_rule_chosen_set_and_the_others_still_decide() -> None:
    # given: victor, the CFO the rule names above the amount, files the request himself
    engine = _engine(definition(approval("sign", OWNER, CFO, mode="all")))

    # when
    engine.start("wf", LARGE, submitter="victor")

    # then: his slot goes to his manager (the default fallback); he is never asked
    (excluded,) = _of(engine, ev.ApproversExcluded)
    assert excluded == ev.ApproversExcluded("sign", (("victor", SUBMITTER),), True)
    assert _asked(engine) == {("olga", 0), ("cora", 1)}
    # not an assignee (NOT_YOUR_STEP), and not eligible either
    _refused(engine, "victor", errors.NOT_YOUR_STEP, errors.SEGREGATION_OF_DUTIES)
    engine.decide("wf", "olga", "approve", "rq-1")
    engine.decide("wf", "cora", "approve", "rq-2")
    assert engine.status("wf") == COMPLETED


def test_a_submitter_in_a_rule_chosen_set_with_nobody_eligible_fails_the_step() -> None:
    directory = StaticDirectory(groups={"owners": ["olga"]}, users=frozenset({"victor"}))
    engine = _engine(definition(approval("sign", OWNER, CFO, mode="all")), directory)

    engine.start("wf", LARGE, submitter="victor")

    (failed,) = _of(engine, ev.StepFailed)
    assert (failed.error, failed.message) == ("NoApprovers", NO_ELIGIBLE_APPROVERS)


def test_a_rule_chosen_person_away_is_stood_in_for_by_their_delegate() -> None:
    # given: victor is away; zoe stands in for him
    away = Delegation("victor", "zoe", 0.0, 1_000_000.0)
    directory = StaticDirectory(
        DIRECTORY.managers, DIRECTORY.groups, DIRECTORY.users, delegations=[away]
    )
    engine = _engine(definition(approval("sign", OWNER, CFO, mode="all")), directory)
    engine.start("wf", LARGE, submitter="alice")
    assert ev.Assignment("zoe", 1, "victor") in engine.state("wf").assignments

    # when
    engine.decide("wf", "zoe", "approve", "rq-1")
    engine.decide("wf", "olga", "approve", "rq-2")

    # then
    decisions = _of(engine, ev.DecisionRecorded)
    assert [(d.actor, d.slot, d.on_behalf_of) for d in decisions] == [
        ("zoe", 1, "victor"),
        ("olga", 0, None),
    ]
    assert engine.status("wf") == COMPLETED


def test_a_delegate_who_submitted_does_not_stand_in_and_the_rule_chosen_person_is_asked() -> None:
    away = Delegation("victor", "alice", 0.0, 1_000_000.0)
    directory = StaticDirectory(
        DIRECTORY.managers, DIRECTORY.groups, DIRECTORY.users, delegations=[away]
    )
    engine = _engine(definition(approval("sign", OWNER, CFO, mode="all")), directory)

    engine.start("wf", LARGE, submitter="alice")

    assert ev.Assignment("victor", 1) in engine.state("wf").assignments


# -- replay ------------------------------------------------------------------------------


def test_replaying_a_rule_chosen_parallel_step_needs_only_the_events() -> None:
    # given
    defn = definition(approval("sign", OWNER, CFO, mode="all"))
    engine = _engine(defn)
    engine.start("wf", LARGE, submitter="alice")
    engine.decide("wf", "victor", "approve", "rq-1")
    events = engine.events("wf")

    # when: replayed under a definition whose condition no longer holds for this data
    stricter = definition(
        approval("sign", OWNER, {"user": "victor", "when": "data.amountPaise > 90000000"})
    )
    state = replay(stricter, [ev.event_from_dict(e.to_dict()) for e in events])

    # then: the people asked are the ones recorded, not asked again
    assert state_to_dict(state) == state_to_dict(engine.state("wf"))
    assert public_status(state) == "PENDING_SIGN"
    assert {a.user for a in state.outstanding()} == {"olga"}


def test_the_recorded_rule_chosen_history_replays_to_its_state() -> None:
    doc = json.loads(HISTORY.read_text())
    defn = Definition.parse(doc["definition"])

    state = replay(defn, [ev.event_from_dict(e) for e in doc["events"]])

    assert state.status == doc["expected"]["status"]
    assert public_status(state) == doc["expected"]["public_status"]
    decided = [e for e in doc["events"] if e["type"] == "DecisionRecorded"]
    assert [(d["actor"], d["slot"]) for d in decided] == [("victor", 1), ("olga", 0)]
