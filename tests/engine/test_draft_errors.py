"""A draft is checked for what it holds, not for what it still lacks."""

from __future__ import annotations

from templates_engine import Definition

from .support import expense, expense_document


def _expense() -> Definition:
    return Definition.parse(expense_document())


def test_a_draft_may_lack_required_fields() -> None:
    assert _expense().draft_errors({}) == []
    assert _expense().draft_errors({"description": "taxi"}) == []


def test_the_same_data_is_incomplete_for_a_start() -> None:
    problems = _expense().data_errors({"description": "taxi"})

    assert any("required" in p for p in problems)


def test_a_draft_with_a_wrong_type_or_a_value_past_a_limit_is_refused() -> None:
    definition = _expense()

    assert definition.draft_errors({"amountPaise": "lots"}) == [
        "$.amountPaise: 'lots' is not of type 'integer'"
    ]
    assert definition.draft_errors({"department": "x" * 65})[0].startswith("$.department:")
    assert definition.draft_errors({"currency": "XYZ"})[0].startswith("$.currency:")


def test_a_draft_may_not_carry_undeclared_fields() -> None:
    problems = _expense().draft_errors({"amountPaise": 5, "colour": "blue"})

    assert len(problems) == 1 and "colour" in problems[0]


def test_a_complete_draft_has_no_problems_either_way() -> None:
    definition = _expense()

    assert definition.draft_errors(expense(4_500_000)) == []
    assert definition.data_errors(expense(4_500_000)) == []


def test_draft_data_must_be_an_object() -> None:
    assert _expense().draft_errors(["not", "an", "object"]) == [
        "$: workflow data must be a JSON object"
    ]
