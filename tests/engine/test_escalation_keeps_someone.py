"""An escalated approval step in mode ``all`` or with a quorum keeps someone who can act.

The history that showed it (a purchase request of the 10M scale fill, workflow
PR-s10-0000002): the demo purchase request's IT-hardware step needs the submitter's
manager and an IT admin (mode ``all``, deadline two days, escalation by default to the
assignee's manager, reassigning). Both late approvers report to one person, Victor; the
deadline handed him both slots, he approved one, and since one person gives one approval
on a step, nobody was left who could give the other: the request waited for ever.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from templates_engine import RUNNING, Definition, StaticDirectory, replay
from templates_engine import events as ev
from templates_engine.state import State
from templates_engine.testing import FakeClock, InMemoryEngine

from ..properties import examples
from .support import approval, definition

DAY = 86_400.0
PURCHASE_JSON = Path(__file__).parents[2] / "approvals" / "demo" / "purchase-request.json"
HARDWARE = {"item": "Monitor, 27 inch", "category": "IT_HARDWARE", "currency": "INR"}
# emp -> mgr -> victor; the IT admins report to victor too
DIRECTORY = StaticDirectory(
    managers={"emp": "mgr", "mgr": "victor", "it1": "victor", "it2": "victor"},
    groups={"it-admins": ["it1", "it2"], "finance": ["fiona"]},
)
ACTIVITIES = {
    name: (lambda *args: {})
    for name in (
        "reserve_budget",
        "release_budget",
        "order_hardware",
        "cancel_hardware_order",
        "notify_erp",
    )
}


def _purchase_engine(clock: FakeClock) -> InMemoryEngine:
    defn = Definition.parse(json.loads(PURCHASE_JSON.read_text()))
    return InMemoryEngine(defn, ACTIVITIES, clock, random.Random(3), DIRECTORY)


def _can_act(state: State) -> bool:
    """The invariant: an open approval step has someone outstanding, or a timer that
    will act on it."""
    if state.status != RUNNING or not state.assignments:
        return True
    return bool(state.outstanding()) or bool(state.timers)


def test_an_escalated_all_step_whose_approvers_share_a_manager_can_still_finish(
    clock: FakeClock,
) -> None:
    # given: the history of PR-s10-0000002, command for command
    engine = _purchase_engine(clock)
    engine.start("wf", {**HARDWARE, "amountPaise": 28_522}, submitter="emp")
    clock.advance(2 * DAY)
    engine.run("wf")  # the deadline fires
    (escalated,) = [e for e in engine.events("wf") if isinstance(e, ev.Escalated)]
    assert {a.user for a in escalated.assignments} == {"victor"}

    # when
    engine.decide("wf", "victor", "approve", "rq-1")

    # then: the step still has someone who can give the other approval
    state = engine.state("wf")
    assert state.step == "review"
    assert state.outstanding(), "nobody left to decide the review step"
    assert not escalated.replace  # victor was added beside the late approvers
    others = sorted({a.user for a in state.outstanding()})
    assert others and set(others) <= {"mgr", "it1", "it2"}
    engine.decide("wf", others[0], "approve", "rq-2")
    assert engine.state("wf").step != "review"
    assert replay(engine.definition, engine.events("wf")) == engine.state("wf")


def test_an_escalation_that_leaves_the_step_finishable_still_reassigns(
    clock: FakeClock,
) -> None:
    # given: two slots whose late approvers have different managers
    directory = StaticDirectory(managers={"emp": "mgr", "mgr": "victor", "it1": "ivan"})
    defn = definition(
        approval("review", {"manager": "submitter"}, {"user": "it1"}, mode="all", deadline="P1D")
    )
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), directory)
    engine.start("wf", {}, submitter="emp")

    # when
    clock.advance(DAY)
    engine.run("wf")

    # then: the template's reassign holds, the late approvers drop out
    (escalated,) = [e for e in engine.events("wf") if isinstance(e, ev.Escalated)]
    assert escalated.replace is True
    assert {a.user for a in engine.state("wf").outstanding()} == {"victor", "ivan"}


def test_an_escalation_to_someone_who_already_approved_keeps_the_late_approver(
    clock: FakeClock,
) -> None:
    # given: mgr approved the first slot; it1, late on the second, reports to mgr
    directory = StaticDirectory(managers={"emp": "mgr", "it1": "mgr"})
    defn = definition(
        approval("review", {"manager": "submitter"}, {"user": "it1"}, mode="all", deadline="P1D")
    )
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), directory)
    engine.start("wf", {}, submitter="emp")
    engine.decide("wf", "mgr", "approve", "rq-1")

    # when
    clock.advance(DAY)
    engine.run("wf")

    # then
    assert [a.user for a in engine.state("wf").outstanding()] == ["it1"]


# -- property: whatever the directory, mode, escalation and order of approvals ----------

PEOPLE = ["p1", "p2", "p3", "p4", "p5"]


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    managers = {p: draw(st.sampled_from(["boss1", "boss2", *PEOPLE])) for p in PEOPLE}
    managers = {p: m for p, m in managers.items() if m != p}
    managers["emp"] = draw(st.sampled_from(PEOPLE))
    group = draw(st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=4, unique=True))
    rules = draw(
        st.lists(
            st.one_of(
                st.just({"manager": "submitter"}),
                st.just({"group": "g"}),
                st.sampled_from([{"user": p} for p in PEOPLE]),
            ),
            min_size=1,
            max_size=3,
        )
    )
    mode = draw(st.sampled_from(["any", "all", "quorum"]))
    fields: dict[str, Any] = {"mode": mode, "deadline": "P1D"}
    if mode == "quorum":
        fields["quorum"] = draw(st.integers(1, 3))
    fields["escalation"] = draw(st.sampled_from(["reassign", "add"]))
    fields["escalate_to"] = draw(
        st.sampled_from([{"manager": "assignee"}, {"user": "boss1"}, {"group": "g"}])
    )
    return {
        "directory": StaticDirectory(managers=managers, groups={"g": group}),
        "rules": rules,
        "fields": fields,
        "before": draw(st.integers(0, 2)),  # approvals before the deadline
        "order": draw(st.randoms(use_true_random=False)),
    }


@settings(max_examples=examples(300), deadline=None)
@given(_cases())
def test_an_open_approval_step_always_has_someone_or_a_timer_to_act(case: dict[str, Any]) -> None:
    try:
        defn = definition(approval("review", *case["rules"], **case["fields"]))
    except Exception:
        return  # a quorum the rules can never reach is refused when parsed
    clock = FakeClock(1_000.0)
    engine = InMemoryEngine(defn, {}, clock, random.Random(1), case["directory"])
    engine.start("wf", {}, submitter="emp")
    order: random.Random = case["order"]

    def approve_one(n: int) -> None:
        outstanding = sorted({a.user for a in engine.state("wf").outstanding()})
        if outstanding and engine.state("wf").step == "review":
            engine.decide("wf", order.choice(outstanding), "approve", f"rq-{n}")

    for n in range(case["before"]):
        approve_one(n)
        assert _can_act(engine.state("wf"))
    clock.advance(DAY)
    engine.run("wf")
    assert _can_act(engine.state("wf"))
    for n in range(case["before"], case["before"] + 8):
        approve_one(n)
        assert _can_act(engine.state("wf"))
    # approving whoever is outstanding, over and over, finishes the step
    assert engine.state("wf").status != RUNNING
    assert replay(defn, engine.events("wf")) == engine.state("wf")
