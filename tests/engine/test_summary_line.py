"""A workflow template's summary line is checked when the definition is parsed: it may
name only fields of the data schema, as plain ``{name}`` fields."""

from __future__ import annotations

from typing import Any

import pytest

from templates_engine import Definition, DefinitionError
from templates_engine.summary import (
    EMPTY_FIELD,
    NOT_A_NAME,
    NOT_TEXT,
    UNKNOWN_FIELD,
    summary_fields,
)

from .support import approval

SCHEMA = {
    "type": "object",
    "properties": {
        "amountPaise": {"type": "integer", "x-money": {"currency": "currency"}},
        "currency": {"type": "string"},
        "description": {"type": "string"},
    },
}


def _parse(summary: Any, schema: dict[str, Any] | None = SCHEMA) -> Definition:
    doc: dict[str, Any] = {
        "key": "claim",
        "steps": [approval("manager", {"manager": "submitter"})],
        "summary": summary,
    }
    if schema is not None:
        doc["schema"] = schema
    return Definition.parse(doc)


def test_a_summary_naming_data_fields_is_kept() -> None:
    defn = _parse("{description}, {amountPaise} {{net}}")

    assert defn.summary == "{description}, {amountPaise} {{net}}"
    assert summary_fields(defn.summary) == ["description", "amountPaise"]


def test_a_definition_without_a_summary_has_none() -> None:
    doc = {"key": "claim", "steps": [approval("manager", {"manager": "submitter"})]}

    assert Definition.parse(doc).summary is None


@pytest.mark.parametrize(
    ("summary", "problem"),
    [
        pytest.param("{purpose}", UNKNOWN_FIELD.format(field="purpose"), id="unknown-field"),
        pytest.param(
            "{description.upper}", NOT_A_NAME.format(field="description.upper"), id="attr"
        ),
        pytest.param("{description[0]}", NOT_A_NAME.format(field="description[0]"), id="index"),
        pytest.param("{description!r}", NOT_A_NAME.format(field="description"), id="conversion"),
        pytest.param("{amountPaise:>9}", NOT_A_NAME.format(field="amountPaise"), id="spec"),
        pytest.param("{0}", NOT_A_NAME.format(field="0"), id="positional-number"),
        pytest.param("{} spent", EMPTY_FIELD, id="positional"),
        pytest.param("", NOT_TEXT, id="empty"),
        pytest.param(42, NOT_TEXT, id="not-text"),
        pytest.param("x" * 201, NOT_TEXT, id="too-long"),
    ],
)
def test_a_summary_that_is_not_plain_data_fields_is_refused_naming_the_path(
    summary: Any, problem: str
) -> None:
    with pytest.raises(DefinitionError) as caught:
        _parse(summary)

    assert caught.value.path == "$.summary"
    assert caught.value.problem == problem


def test_an_unbalanced_brace_is_refused_naming_the_path() -> None:
    with pytest.raises(DefinitionError) as caught:
        _parse("{description")

    assert caught.value.path == "$.summary"
    assert "is not a format string" in caught.value.problem


def test_a_summary_of_a_definition_without_a_schema_names_no_field() -> None:
    assert _parse("Expense", schema=None).summary == "Expense"
    with pytest.raises(DefinitionError) as caught:
        _parse("{description}", schema=None)

    assert caught.value.path == "$.summary"
    assert caught.value.problem == UNKNOWN_FIELD.format(field="description")


def test_a_step_is_named_by_its_title_else_its_id_in_words() -> None:
    defn = Definition.parse(
        {
            "key": "claim",
            "steps": [
                approval("fin", {"group": "finance"}, title="Finance"),
                approval("sign_off", {"user": "zoe"}),
            ],
        }
    )

    assert defn.step_title("fin") == "Finance"
    assert defn.step_title("sign_off") == "Sign off"
