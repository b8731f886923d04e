"""A workflow template cannot hold the server: conditions are bounded at parse and
before each evaluation, durations are bounded, and data schemas neither fetch anything
nor run their patterns on a backtracking engine."""

from __future__ import annotations

import random
import re
import urllib.request
from typing import Any

import pytest
import referencing.exceptions

import templates_engine.data_schema as data_schema
from templates_engine import CommandRejected, Definition, StaticDirectory
from templates_engine import errors as engine_errors
from templates_engine import expression_limits as limits
from templates_engine.durations import DURATION_TOO_LONG
from templates_engine.errors import DefinitionError
from templates_engine.expressions import Condition, DataTooLarge
from templates_engine.testing import FakeClock, InMemoryEngine

WHEN = "$.steps[0].when"


def _doc(**step: Any) -> dict[str, Any]:
    return {"key": "limits", "steps": [{"id": "w", "kind": "wait", "duration": "PT1H", **step}]}


def _refused(doc: dict[str, Any]) -> DefinitionError:
    with pytest.raises(DefinitionError) as refused:
        Definition.parse(doc)
    return refused.value


def _engine(doc: dict[str, Any]) -> InMemoryEngine:
    return InMemoryEngine(
        Definition.parse(doc), {}, FakeClock(), random.Random(1), StaticDirectory()
    )


# -- durations ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "duration", ["P3000000D", "P3651D", "P999999999999D", "PT99999999999999999999S", 1e300]
)
def test_a_duration_past_ten_years_is_refused_at_parse(duration):
    error = _refused(_doc(duration=duration))

    assert error.path == "$.steps[0].duration"
    assert error.problem == DURATION_TOO_LONG


def test_a_deadline_past_ten_years_is_refused_at_parse():
    doc = {
        "key": "limits",
        "steps": [
            {"id": "a", "kind": "approval", "approvers": [{"user": "bob"}], "deadline": "P3000000D"}
        ],
    }

    assert _refused(doc).problem == DURATION_TOO_LONG


def test_ten_years_is_still_a_duration():
    Definition.parse(_doc(duration="P3650D"))


# -- conditions: bounded at parse --------------------------------------------------------


def test_two_hundred_nested_parentheses_are_refused_with_the_reason():
    error = _refused(_doc(when="(" * 200 + "true" + ")" * 200))

    assert error.path == WHEN
    assert error.problem == f"condition {limits.TOO_NESTED}"


def test_comprehensions_nested_three_deep_are_refused_with_the_reason():
    items = "[" + ",".join(str(i) for i in range(30)) + "]"
    source = f"{items}.all(a, {items}.all(b, {items}.all(c, a + b + c >= 0)))"

    error = _refused(_doc(when=source))

    assert error.problem == f"condition {limits.TOO_MANY_COMPREHENSIONS}"


def test_comprehensions_nested_two_deep_are_allowed():
    Condition("data.xs.exists(x, data.ys.all(y, y != x))", WHEN)


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("data.a == " + " + ".join(["1"] * 400), limits.TOO_LONG),
        ("[" + ",".join(["1"] * 101) + "].size() > 0", limits.LITERAL_TOO_LONG),
        (
            "{" + ",".join(f'"k{i}": 1' for i in range(101)) + "}.size() > 0",
            limits.LITERAL_TOO_LONG,
        ),
        ("&&".join(["true"] * 160), limits.TOO_DEEP),
        ("-" * 300 + "1 < 0", limits.TOO_DEEP),
    ],
    ids=["long", "list-literal", "map-literal", "long-chain", "unary-chain"],
)
def test_oversized_conditions_are_refused_with_the_reason(source, problem):
    error = _refused(_doc(when=source))

    assert error.path == WHEN
    assert error.problem == f"condition {problem}"


def test_brackets_inside_a_string_do_not_count_as_nesting():
    Condition('data.s == "((((((((((((((((((((("', WHEN)


# -- conditions: guarded before each evaluation ------------------------------------------

NESTED = "data.xs.all(x, data.xs.all(y, x + y >= 0))"


def test_a_start_whose_data_is_too_large_for_a_nested_rule_is_refused_and_nothing_runs():
    engine = _engine(_doc(when=NESTED) | {"allow_undeclared_fields": True})

    with pytest.raises(CommandRejected) as rejected:
        engine.start("wf-1", {"xs": list(range(2000))}, submitter="alice")

    assert rejected.value.code == engine_errors.INVALID_DATA
    assert limits.TOO_COSTLY.format(largest=2000, source=NESTED) in rejected.value.message
    with pytest.raises(KeyError):
        engine.status("wf-1")


def test_the_same_rule_runs_on_small_data():
    engine = _engine(_doc(when=NESTED))

    engine.start("wf-1", {"xs": list(range(10))}, submitter="alice")

    assert engine.status("wf-1") == "RUNNING"


def test_the_guard_refuses_before_evaluating():
    with pytest.raises(DataTooLarge):
        Condition(NESTED, WHEN).evaluate({"xs": list(range(5000))}, "alice")


def test_a_rule_that_walks_no_list_has_no_cost_guard():
    condition = Condition("data.amount > 10", WHEN)

    assert not condition.walks
    assert condition.too_costly(10**9) is None


# -- data schemas -------------------------------------------------------------------------


def _with_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return {**_doc(), "schema": schema}


@pytest.mark.parametrize(
    ("where", "ref"),
    [
        ("$ref", "https://schemas.example.com/vendor.json"),
        ("$ref", "vendor.json"),
        ("$dynamicRef", "http://127.0.0.1:8000/metrics"),
    ],
)
def test_a_reference_outside_the_schema_is_refused_at_parse(where, ref):
    schema = {"type": "object", "properties": {"vendor": {where: ref}}}

    error = _refused(_with_schema(schema))

    assert error.path == f"$.schema.properties.vendor.{where}"
    assert error.problem == data_schema.REMOTE_REF.format(ref=ref)


def test_a_reference_inside_the_schema_is_allowed():
    schema = {
        "type": "object",
        "$defs": {"code": {"type": "string"}},
        "properties": {"vendor": {"$ref": "#/$defs/code"}},
    }

    assert Definition.parse(_with_schema(schema)).data_errors({"vendor": 1})


def test_checking_data_never_fetches_even_a_reference_that_slipped_through(monkeypatch):
    fetched: list[object] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: fetched.append(a))
    validator = data_schema.data_validator({"$ref": "http://127.0.0.1:9/schema.json"})

    with pytest.raises(referencing.exceptions.Unresolvable):
        list(validator.iter_errors({}))

    assert fetched == []


def test_a_pattern_re2_cannot_take_is_refused_at_parse():
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"(a)\1"}}}

    error = _refused(_with_schema(schema))

    assert error.path == "$.schema.properties.code.pattern"
    assert error.problem.startswith(
        data_schema.PATTERN_NOT_RE2.split("{why}")[0].format(pattern=r"(a)\1")
    )


def test_unevaluated_properties_beside_pattern_properties_is_refused():
    schema = {
        "type": "object",
        "patternProperties": {"^x-": {"type": "string"}},
        "unevaluatedProperties": False,
    }

    assert _refused(_with_schema(schema)).problem == data_schema.UNEVALUATED_WITH_PATTERNS


@pytest.fixture
def no_backtracking(monkeypatch):
    """Python's ``re.search`` fails inside jsonschema: only RE2 may run the patterns."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a schema pattern ran on Python's re")

    for module in ("_keywords", "_utils"):
        monkeypatch.setattr(f"jsonschema.{module}.re", type("re", (), {"search": refuse}))
    return refuse


CATASTROPHIC = "^(a+)+$"
HOSTILE = "a" * 30 + "!"


def test_a_catastrophic_pattern_is_checked_by_re2(no_backtracking):
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": CATASTROPHIC}}}
    engine = _engine(_with_schema(schema))

    with pytest.raises(CommandRejected) as rejected:
        engine.start("wf-1", {"code": HOSTILE}, submitter="alice")

    assert rejected.value.code == engine_errors.INVALID_DATA
    assert f"does not match {CATASTROPHIC!r}" in rejected.value.message


def test_catastrophic_pattern_properties_are_checked_by_re2(no_backtracking):
    schema = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {"type": "integer"}},
        "additionalProperties": False,
        "propertyNames": {"pattern": CATASTROPHIC},
    }
    definition = Definition.parse(_with_schema(schema))

    problems = definition.data_errors({HOSTILE: 1, "aaa": 2})

    assert problems and all("'aaa'" not in p for p in problems)
    assert any(f"does not match any of the regexes: {CATASTROPHIC!r}" in p for p in problems)


def test_the_no_backtracking_fixture_catches_a_validator_on_python_re(no_backtracking):
    import jsonschema  # type: ignore[import-untyped]

    plain = jsonschema.Draft202012Validator({"type": "string", "pattern": CATASTROPHIC})

    with pytest.raises(AssertionError):
        list(plain.iter_errors(HOSTILE))
    assert re.search("a", "a")  # the real module is untouched
