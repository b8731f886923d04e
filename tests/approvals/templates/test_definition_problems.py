"""Problems publishing would meet, as the admin reads them: where (step number and
title, the approver), what, in words; no JSON path, ISO 8601 text or data.name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from approvals.web.definition_problems import problem_words
from templates_engine import Definition, DefinitionError

EXPENSE = json.loads(
    (Path(__file__).resolve().parents[3] / "approvals/demo/expense-approval.json").read_text()
)


@pytest.mark.parametrize(
    ("deadline", "words"),
    [
        (
            "P-2D",
            "Step 1, Manager: the deadline must be a positive number of days, hours or minutes.",
        ),
        (-60, "Step 1, Manager: the deadline must be a positive number of days, hours or minutes."),
        (
            "P1M",
            "Step 1, Manager: the deadline must be a positive number of days, hours or minutes.",
        ),
    ],
)
def test_a_bad_deadline_reads_as_days_hours_or_minutes(deadline: object, words: str) -> None:
    doc = json.loads(json.dumps(EXPENSE))
    doc["steps"][0]["deadline"] = deadline
    with pytest.raises(DefinitionError) as caught:
        Definition.parse(doc)

    problem = problem_words(caught.value, doc)

    assert problem.text == words
    assert "ISO" not in problem.text and "$." not in problem.text


def test_a_condition_on_an_undeclared_field_names_the_step_and_links_to_its_builder() -> None:
    problem = problem_words(
        DefinitionError(
            "$.steps[1].when",
            "the condition reads data.amountPaise, which the data schema does not declare",
        ),
        EXPENSE,
    )

    assert problem.text == (
        "Step 2, VP: the condition reads Amount, which the data schema does not declare"
    )
    assert problem.anchor == "when-vp"


def test_an_approver_s_problem_names_the_approver() -> None:
    problem = problem_words(
        DefinitionError("$.steps[2].approvers[0].when", "condition does not compile: x"), EXPENSE
    )

    assert problem.text == "Step 3, Finance, approver 1: the condition does not compile: x"
    assert problem.anchor == "when-finance-by-0"
