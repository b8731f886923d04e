"""A request's history says only what happened: every path through the demo workflow
templates and every recorded engine history, told in sentences, is checked against its
own events. Nothing is "undone" unless an undo ran, nothing "rejected" that was sent
back, nothing "withdrawn" that someone else cancelled, and a step that failed says why."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.web import present
from templates_engine import events as ev

from .demo_paths import NAMES, Path_, demo_paths, engine_histories, entries

PATHS = demo_paths() + engine_histories()


def _submitter(events: list[ev.Event]) -> str | None:
    started = next(e for e in events if isinstance(e, ev.WorkflowStarted))
    return started.submitter


def _facts(events: list[ev.Event], submitter: str | None) -> dict[str, bool]:
    cancels = [e for e in events if isinstance(e, ev.WorkflowCancelled)]
    turned = [e.outcome for e in events if isinstance(e, ev.CompensationStarted)]
    withdrawn = any(e.actor and e.actor == submitter for e in cancels) or any(
        isinstance(e, ev.CompensationStarted)
        and e.outcome == "CANCELLED"
        and e.reason.startswith(f"cancelled by {submitter}:")
        for e in events
    )
    return {
        "undo_ran": any(isinstance(e, ev.ActivitySucceeded) and e.undo for e in events),
        "rejected": any(isinstance(e, ev.WorkflowRejected) for e in events) or "REJECTED" in turned,
        "sent_back": any(isinstance(e, ev.SentBack) for e in events),
        "withdrawn": withdrawn,
        "cancelled": bool(cancels) and not withdrawn or ("CANCELLED" in turned and not withdrawn),
        "approved": any(isinstance(e, ev.WorkflowCompleted) for e in events),
    }


def contradictions(path: Path_) -> list[str]:
    """The sentences of ``path``'s history that say something its events do not."""
    submitter = _submitter(path.events)
    ctx = present.Context(raw_definition=path.raw, data={}, names=NAMES, submitter=submitter)
    facts = _facts(path.events, submitter)
    found: list[str] = []
    for line in present.timeline(entries(path.events), ctx):
        text = line.text.lower()
        claims = {
            "undo_ran": "undone" in text and "nothing to undo" not in text,
            "rejected": "reject" in text,
            "sent_back": "sent the request back" in text or "sent back" in text,
            "withdrawn": "withdr" in text,
            "cancelled": "cancelled" in text and "request" in text,
            "approved": "request was approved" in text,
        }
        found += [
            f"{line.kind}: {line.text}" for fact, said in claims.items() if said and not facts[fact]
        ]
        if "was undone" in text and line.kind != "ActivitySucceeded":
            found.append(f"{line.kind} says a step was undone: {line.text}")
        if line.kind == "StepFailed" and "did not pass" in text and ":" not in text:
            found.append(f"a failed step without its reason: {line.text}")
    return found


def test_the_paths_cover_every_ending_and_every_decision() -> None:
    endings = {type(p.events[-1]).__name__ for p in PATHS}
    decisions = {d for p in PATHS for _, d, _ in p.decisions}

    assert {"WorkflowCompleted", "WorkflowRejected", "WorkflowCancelled"} <= endings
    assert "WorkflowRolledBack" in endings
    assert decisions == {"approve", "reject", "send_back"}
    assert any(isinstance(e, ev.StepCompleted) and e.compensate for p in PATHS for e in p.events)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.name)
def test_no_sentence_of_a_history_contradicts_its_events(path: Path_) -> None:
    assert contradictions(path) == []


def _purchase_approved() -> Path_:
    return next(
        p
        for p in PATHS
        if p.name.startswith("purchase-request#0")
        and isinstance(p.events[-1], ev.WorkflowCompleted)
    )


def test_a_step_with_an_undo_reads_as_completed_not_undone() -> None:
    path = _purchase_approved()
    ctx = present.Context(raw_definition=path.raw, data={}, names=NAMES, submitter="alice")

    texts = [line.text for line in present.timeline(entries(path.events), ctx)]

    assert "The Reserve budget step was completed" in texts
    assert not [t for t in texts if "undone" in t]


def test_a_failed_budget_check_says_why_in_words() -> None:
    path = next(p for p in PATHS if any(isinstance(e, ev.StepFailed) for e in p.events))
    ctx = present.Context(raw_definition=path.raw, data={}, names=NAMES, submitter="alice")

    failed = [
        line.text
        for line in present.timeline(entries(path.events), ctx)
        if line.kind == "StepFailed"
    ]

    assert failed == [
        "The Reserve budget step did not pass: "
        "₹1,50,00,000.00 is more than the department's budget allows"
    ]


@pytest.mark.parametrize(
    ("error", "message", "why"),
    [
        ("BudgetExceeded", "₹9.00 is more than the department's budget allows.", "₹9.00 is more"),
        ("HttpTimeout", "no answer from erp.example within 10s", "did not answer in time"),
        ("KeyError", "'vendor'", "an error an administrator can see"),
    ],
)
def test_a_failure_reason_is_words_never_the_errors_name(
    error: str, message: str, why: Any
) -> None:
    text = present.sentence(
        "StepFailed",
        {"step": "erp", "error": error, "message": message},
        actor=None,
        on_behalf_of=None,
        ctx=present.Context(raw_definition={}, data={}, names={}),
    )

    assert why in text
    assert error not in text and "vendor" not in text
