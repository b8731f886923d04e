"""Workflow data the routing rules cannot hold is refused as INVALID_DATA, not a crash;
data schemas refuse undeclared fields unless the definition allows them."""

from __future__ import annotations

import random

import pytest

from templates_engine import CommandRejected, Definition, StaticDirectory
from templates_engine import errors as engine_errors
from templates_engine.errors import DefinitionError
from templates_engine.expressions import Condition, ConditionError, DataNotEvaluable
from templates_engine.testing import FakeClock, InMemoryEngine

DOC = {
    "key": "limits",
    "schema": {
        "type": "object",
        "properties": {"amount": {"type": "integer"}, "meta": {"type": "object"}},
    },
    "steps": [{"id": "big", "kind": "wait", "duration": "PT1H", "when": "data.amount > 10"}],
}


def _engine(doc: dict) -> InMemoryEngine:
    return InMemoryEngine(
        Definition.parse(doc), {}, FakeClock(), random.Random(1), StaticDirectory()
    )


@pytest.mark.parametrize("amount", [2**63, -(2**63) - 1, 10**30])
def test_start_with_an_integer_past_64_bits_is_invalid_data(amount):
    engine = _engine(DOC)

    with pytest.raises(CommandRejected) as rejected:
        engine.start("wf-1", {"amount": amount}, submitter="alice")

    assert rejected.value.code == engine_errors.INVALID_DATA
    assert "$.amount" in rejected.value.message


def test_a_condition_given_unconvertible_data_raises_data_not_evaluable():
    with pytest.raises(DataNotEvaluable):
        Condition("data.amount > 10", "$.when").evaluate({"amount": 2**64}, "alice")


def test_the_largest_64_bit_integer_is_evaluated():
    assert Condition("data.amount > 10", "$.when").evaluate({"amount": 2**63 - 1}, "alice")


@pytest.mark.parametrize(
    "data",
    [{"amount": 5, "amuont": 1}, {"amount": 5, "meta": {"undeclared": 1}}],
    ids=["top-level", "nested"],
)
def test_undeclared_fields_are_invalid_data_by_default(data):
    with pytest.raises(CommandRejected) as rejected:
        _engine(DOC).start("wf-1", data, submitter="alice")

    assert rejected.value.code == engine_errors.INVALID_DATA


def test_allow_undeclared_fields_opts_out():
    engine = _engine({**DOC, "allow_undeclared_fields": True})

    engine.start("wf-1", {"amount": 5, "amuont": 1, "meta": {"x": 1}}, submitter="alice")

    assert engine.status("wf-1") == "COMPLETED"


def test_an_explicit_additional_properties_is_kept():
    doc = {**DOC, "schema": {**DOC["schema"], "additionalProperties": True}}

    _engine(doc).start("wf-1", {"amount": 5, "other": 1}, submitter="alice")


def test_allow_undeclared_fields_must_be_a_boolean():
    from templates_engine import DefinitionError

    with pytest.raises(DefinitionError) as error:
        Definition.parse({**DOC, "allow_undeclared_fields": "yes"})

    assert "allow_undeclared_fields" in str(error.value)


@pytest.mark.parametrize(
    ("source", "data", "reason"),
    [
        ("data.amount > 10", {}, "no such member in mapping: 'amount'"),
        ("data.a / data.b > 1", {"a": 1, "b": 0}, "divide by zero"),
        ("data.x.y == 1", {"x": None}, "does not support field selection"),
        ("data.amount > 10", {"amount": "ten"}, "no matching overload"),
    ],
)
def test_a_rule_that_fails_says_why(source: str, data: dict[str, object], reason: str) -> None:
    # The rule runs transpiled to Python; its failure still names CEL's reason.
    with pytest.raises(ConditionError) as failed:
        Condition(source, "$.when").evaluate(data, "alice")
    assert str(failed.value).startswith(repr(source)) and reason in str(failed.value)


@pytest.mark.parametrize(
    "source", ["__class__ == null", "data.__class__ == null", '__import__("os") == null']
)
def test_a_rule_naming_what_python_keeps_for_itself_is_refused(source: str) -> None:
    # Rules run as transpiled Python: a dunder name would reach the evaluator's objects.
    with pytest.raises(DefinitionError, match="condition uses a name CEL does not offer"):
        Condition(source, "$.when")


def test_a_field_with_underscores_is_still_a_field() -> None:
    assert Condition("data.amount_paise > 10 && data._tag == 'x'", "$.when").evaluate(
        {"amount_paise": 11, "_tag": "x"}, "alice"
    )
