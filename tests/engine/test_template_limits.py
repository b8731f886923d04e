"""A workflow template cannot hold the server: conditions are bounded at parse and
before each evaluation, durations, reminders and retries are bounded, and data schemas
neither fetch anything, nor run their patterns on a backtracking engine, nor take
unbounded work to check data against."""

from __future__ import annotations

import json
import random
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import referencing.exceptions

import templates_engine.data_schema as data_schema
from templates_engine import CommandRejected, Definition, StaticDirectory, retry
from templates_engine import errors as engine_errors
from templates_engine import expression_limits as limits
from templates_engine.durations import DURATION_TOO_LONG
from templates_engine.errors import DefinitionError
from templates_engine.expressions import Condition, DataTooLarge
from templates_engine.steps import approval
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


# -- reminders and retries ---------------------------------------------------------------


def _approval(**fields: Any) -> dict[str, Any]:
    step = {"id": "a", "kind": "approval", "approvers": [{"user": "bob"}], **fields}
    return {"key": "limits", "steps": [step]}


def _action(**fields: Any) -> dict[str, Any]:
    return {"key": "limits", "steps": [{"id": "a", "kind": "action", "activity": "x", **fields}]}


def test_three_thousand_reminders_on_a_step_are_refused_at_parse():
    error = _refused(_approval(reminders=[f"PT{i + 1}S" for i in range(3000)]))

    assert error.path == "$.steps[0].reminders"
    assert error.problem == approval.TOO_MANY_REMINDERS


def test_reminders_up_to_the_cap_are_allowed():
    reminders = [f"PT{i + 1}H" for i in range(approval.MAX_REMINDERS)]

    definition = Definition.parse(_approval(reminders=reminders))

    assert len(definition.steps[0].reminders) == 10  # type: ignore[attr-defined]


@pytest.mark.parametrize("where", ["retry", "compensate"])
def test_a_billion_attempts_are_refused_at_parse(where):
    policy = {"max_attempts": 1_000_000_000, "initial_interval": 0}
    fields = (
        {"retry": policy}
        if where == "retry"
        else {"compensate": {"activity": "undo", "retry": policy}}
    )
    path = "$.steps[0].retry" if where == "retry" else "$.steps[0].compensate.retry"

    error = _refused(_action(**fields))

    assert error.path == f"{path}.max_attempts"
    assert error.problem == retry.TOO_MANY_ATTEMPTS


def test_a_hundred_attempts_are_allowed():
    Definition.parse(_action(retry={"max_attempts": retry.MAX_ATTEMPTS}))


@pytest.mark.parametrize(("interval", "problem"), [(0, True), ("PT0.5S", True), ("PT1S", False)])
def test_a_retry_under_a_second_is_a_publish_problem_but_still_loads(interval, problem):
    # A version already published with it still loads (its workflows replay); publishing
    # one asks publish_problem (approvals.selectors.templates).
    definition = Definition.parse(_action(retry={"initial_interval": interval}))
    policy = definition.steps[0].run.retry  # type: ignore[attr-defined]

    assert policy.publish_problem() == (retry.INTERVAL_TOO_SHORT if problem else None)


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


def test_converting_the_whole_data_once_per_item_is_refused_at_parse():
    error = _refused(_doc(when="data.l.all(x, size(string(data.m)) > 0)"))

    assert error.path == WHEN
    assert error.problem == "condition " + limits.CONVERSION_IN_COMPREHENSION.format(
        function="string"
    )


@pytest.mark.parametrize(
    "source",
    [
        "data.l.exists(x, bytes(data.s) == b'')",
        "data.l.map(x, string(data)).size() > 0",
        "data.xs.exists(x, data.ys.all(y, string(data.m) != ''))",
    ],
)
def test_other_conversions_of_data_inside_a_comprehension_are_refused(source):
    assert "inside all/exists/map/filter" in _refused(_doc(when=source)).problem


@pytest.mark.parametrize(
    "source",
    [
        "string(data.m) != ''",
        "data.l.all(x, string(x) != '')",
        "data.l.all(x, size(string(x.name)) > 0)",
        "data.xs.exists(x, data.ys.all(y, string(y) != string(x)))",
    ],
)
def test_converting_the_item_or_converting_once_is_allowed(source):
    Condition(source, WHEN)


def test_the_demo_templates_conditions_still_pass():
    demo = Path(__file__).parents[2] / "approvals" / "demo"
    docs = [json.loads(path.read_text()) for path in sorted(demo.glob("*.json"))]
    conditions = [step["when"] for doc in docs for step in doc["steps"] if "when" in step]

    for doc in docs:
        Definition.parse(doc)
    assert conditions  # the demo still has conditions to check


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


# -- data schemas: bounded work to check data against -------------------------------------


def _chain(width: int, depth: int) -> dict[str, Any]:
    """Definitions ``l0`` .. ``l{depth}``, each ``anyOf`` ``width`` references to the next:
    following every reference applies ``width ** depth`` subschemas to one value."""
    defs: dict[str, Any] = {
        f"l{level}": {"anyOf": [{"$ref": f"#/$defs/l{level + 1}"}] * width}
        for level in range(depth)
    }
    defs[f"l{depth}"] = {"type": "string"}
    return {"type": "object", "$defs": defs, "properties": {"v": {"$ref": "#/$defs/l0"}}}


@pytest.mark.parametrize("depth", [6, 7])
def test_a_chain_of_references_ten_wide_is_refused_at_parse(depth):
    error = _refused(_with_schema(_chain(10, depth)))

    assert error.path == "$.schema"
    assert error.problem == data_schema.TOO_MANY_NODES


def test_a_short_chain_of_references_is_allowed():
    definition = Definition.parse(_with_schema(_chain(3, 3)))

    assert definition.data_errors({"v": "x"}) == []
    assert definition.data_errors({"v": 1})


@pytest.mark.parametrize(
    ("ref", "path"),
    [
        ("#/nope/x", "$.schema.properties.v.$ref"),
        ("#nope", "$.schema.properties.v.$ref"),
        ("#/$defs/missing", "$.schema.properties.v.$ref"),
        ("#/properties/v/items/0", "$.schema.properties.v.$ref"),
    ],
)
def test_a_missing_local_reference_is_refused_at_parse(ref, path):
    schema = {
        "type": "object",
        "$defs": {"code": {"type": "string"}},
        "properties": {"v": {"$ref": ref}},
    }

    error = _refused(_with_schema(schema))

    assert error.path == path
    assert error.problem == data_schema.MISSING_REF.format(ref=ref)


@pytest.mark.parametrize(
    ("schema", "path", "ref"),
    [
        ({"type": "object", "properties": {"v": {"$ref": "#"}}}, "$.schema.properties.v.$ref", "#"),
        (
            {
                "type": "object",
                "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                "properties": {"v": {"$ref": "#/$defs/a"}},
            },
            "$.schema.$defs.a.$ref",
            "#/$defs/b",
        ),
        (
            {"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}},
            "$.schema.$defs.a.$ref",
            "#/$defs/a",
        ),
        (
            {"type": "object", "properties": {"v": {"$anchor": "v", "not": {"$ref": "#v"}}}},
            "$.schema.properties.v.not.$ref",
            "#v",
        ),
        (
            # a tree: recursion that consumes input is refused too, forms have a fixed shape
            {"type": "object", "properties": {"children": {"items": {"$ref": "#"}}}},
            "$.schema.properties.children.items.$ref",
            "#",
        ),
    ],
    ids=["root", "a-b-a", "self", "anchor", "tree"],
)
def test_a_reference_that_leads_back_to_itself_is_refused_at_parse(schema, path, ref):
    error = _refused(_with_schema(schema))

    assert error.path == path
    assert error.problem == data_schema.CYCLIC_REF.format(ref=ref)


def test_a_reference_by_anchor_or_escaped_pointer_is_allowed():
    schema = {
        "type": "object",
        "$defs": {"a/b": {"$anchor": "code", "type": "string"}},
        "properties": {"v": {"$ref": "#code"}, "w": {"$ref": "#/$defs/a~1b"}},
    }

    assert Definition.parse(_with_schema(schema)).data_errors({"v": 1, "w": "x"})


@pytest.mark.parametrize(
    ("schema", "path", "problem"),
    [
        (
            {"type": "object", "properties": {"v": {"$dynamicRef": "#meta"}}},
            "$.schema.properties.v.$dynamicRef",
            data_schema.DYNAMIC_REF,
        ),
        (
            {
                "type": "object",
                "properties": {"v": {"$id": "https://x.example/v", "type": "string"}},
            },
            "$.schema.properties.v.$id",
            data_schema.INNER_ID,
        ),
        (
            {"type": "object", "properties": {"v": {"anyOf": [{"const": i} for i in range(51)]}}},
            "$.schema.properties.v.anyOf",
            data_schema.TOO_MANY_BRANCHES,
        ),
        (
            {"type": "object", "properties": {"v": {"oneOf": [{"const": i} for i in range(51)]}}},
            "$.schema.properties.v.oneOf",
            data_schema.TOO_MANY_BRANCHES,
        ),
        (
            {"type": "object", "properties": {"v": {"type": "array", "uniqueItems": True}}},
            "$.schema.properties.v.uniqueItems",
            data_schema.UNIQUE_WITHOUT_MAX,
        ),
        (
            {
                "type": "object",
                "properties": {"v": {"type": "array", "uniqueItems": True, "maxItems": 3000}},
            },
            "$.schema.properties.v.uniqueItems",
            data_schema.UNIQUE_WITHOUT_MAX,
        ),
    ],
    ids=["dynamic-ref", "inner-id", "any-of", "one-of", "unique-unbounded", "unique-3000"],
)
def test_a_schema_whose_checking_is_unbounded_is_refused_at_parse(schema, path, problem):
    error = _refused(_with_schema(schema))

    assert error.path == path
    assert error.problem == problem


def test_unique_items_with_a_small_max_items_is_allowed():
    schema = {
        "type": "object",
        "properties": {
            "v": {"type": "array", "uniqueItems": True, "maxItems": data_schema.MAX_UNIQUE_ITEMS}
        },
    }

    assert Definition.parse(_with_schema(schema)).data_errors({"v": [1, 1]})


def test_unique_items_compares_nothing_on_an_array_past_its_max_items(monkeypatch):
    compared: list[int] = []
    original = data_schema._UNIQUE_ITEMS

    def counted(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
        compared.append(len(instance))
        yield from original(validator, unique, instance, schema)

    monkeypatch.setattr(data_schema, "_UNIQUE_ITEMS", counted)
    schema = {
        "type": "object",
        "properties": {"v": {"type": "array", "uniqueItems": True, "maxItems": 200}},
    }
    definition = Definition.parse(_with_schema(schema))

    problems = definition.data_errors({"v": [{"n": i} for i in range(3000)]})

    assert compared == []
    assert len(problems) == 1 and problems[0].endswith("is too long")
    assert definition.data_errors({"v": [{"n": 1}, {"n": 1}]})
    assert compared == [2]


# -- checking a start's data: a counted budget -------------------------------------------

_LINES = {
    "type": "object",
    "properties": {
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string", "minLength": 1}},
            },
        }
    },
}


def test_checking_data_past_its_step_budget_stops_and_says_so_in_words():
    definition = Definition.parse(_with_schema(_LINES))
    # about five keyword checks a line: 30,000 lines are past the 100,000 steps
    lines = [{"sku": "A-1"}] * 30_000

    assert definition.data_errors({"lines": lines}) == [data_schema.CHECK_TOO_COSTLY]
    assert definition.draft_errors({"lines": lines}) == [data_schema.CHECK_TOO_COSTLY]
    assert "took more than 100,000 steps" in data_schema.CHECK_TOO_COSTLY


def test_data_within_the_budget_is_checked_as_before():
    definition = Definition.parse(_with_schema(_LINES))

    assert definition.data_errors({"lines": [{"sku": "A-1"}] * 100}) == []
    assert definition.data_errors({"lines": [{"sku": ""}]}) == [
        "$.lines[0].sku: '' should be non-empty"
    ]


def test_the_budget_counts_every_keyword_check_and_is_given_back_after_each_document():
    validator = data_schema.data_validator(_LINES)
    one_line = {"lines": [{"sku": "A-1"}]}

    with pytest.raises(data_schema.CheckTooCostly):
        data_schema.data_problems(validator, one_line, budget=3)
    assert data_schema.data_problems(validator, one_line, budget=50) == []
    # outside a budgeted check nothing is counted (the publish-time checks, the tests)
    assert list(validator.iter_errors({"lines": [{"sku": "A-1"}] * 50_000})) == []
