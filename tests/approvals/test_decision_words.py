"""Every decision's button names what the workflow template will record: over every
path through every demo template, each decision made is checked against the event it
led to ("Send back to Alice" where a rejection goes back to her, "Reject (ends the
request)" only where it ends it), and the buttons a step offers are distinct."""

from __future__ import annotations

import pytest

from approvals.words.decisions import END, SUBMITTER, outcome_at, step_outcomes
from templates_engine import events as ev

from .demo_paths import Path_, demo_definitions, demo_paths

PATHS = [p for p in demo_paths() if p.decisions]


def _led_to(path: Path_, index: int) -> str:
    """Where the decision at ``index`` led, by the event after it."""
    after = path.events[index + 1] if index + 1 < len(path.events) else None
    if isinstance(after, ev.SentBack):
        return after.to_step or SUBMITTER
    if isinstance(after, ev.CompensationStarted) and after.outcome == "REJECTED":
        return END
    if isinstance(after, ev.WorkflowRejected):
        return END
    return ""


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_each_decisions_words_match_the_event_it_recorded(path: Path_) -> None:
    for step, decision, index in path.decisions:
        words = outcome_at(path.raw, step, decision, requester="Alice")
        offered = {o.label for o in step_outcomes(path.raw, step, requester="Alice")}

        assert words.target == _led_to(path, index), (step, decision, words)
        assert words.label in offered
        assert ("Reject" in words.label) == (_led_to(path, index) == END)
        if words.target == SUBMITTER:
            assert words.label == "Send back to Alice"
            assert words.done_words("R-8") == "Sent R-8 back to Alice"


def test_every_demo_step_offers_distinct_buttons_named_for_their_outcome() -> None:
    labels = {
        (key, step["id"]): [o.label for o in step_outcomes(raw, step["id"], requester="Alice")]
        for key, raw in demo_definitions().items()
        for step in raw["steps"]
        if step["kind"] == "approval"
    }

    assert labels[("expense-approval", "manager")] == ["Approve", "Send back to Alice"]
    assert labels[("expense-approval", "vp")] == [
        "Approve",
        "Reject (ends the request)",
        "Send back to Alice",
    ]
    assert labels[("expense-approval", "finance")] == [
        "Approve",
        "Reject (ends the request)",
        "Send back to the Manager step",
    ]
    for step_labels in labels.values():
        assert len(set(step_labels)) == len(step_labels)
        assert all(label != "Reject" for label in step_labels)


def test_the_submitters_own_step_resubmits_or_withdraws() -> None:
    raw = demo_definitions()["expense-approval"]

    resubmit = outcome_at(raw, "submitter", "approve", requester="Alice")
    withdraw = outcome_at(raw, "submitter", "reject", requester="Alice")

    assert (resubmit.label, withdraw.label) == ("Resubmit", "Withdraw")
    assert withdraw.done_words("Expense claim R-8") == "Withdrew Expense claim R-8"
