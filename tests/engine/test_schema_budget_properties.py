"""Any data schema that publishes checks a document in bounded work: generated schemas
of nested anyOf/oneOf/allOf, objects, arrays and references between definitions are
either refused at parse or check a generated document in at most
``MAX_EXPANDED_NODES`` keyword applications per value of the document (times the most
keywords one subschema says), plus the pairs uniqueItems compares. Work is counted in
keyword calls, never timed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import jsonschema_specifications  # type: ignore[import-untyped]
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from templates_engine import Definition, data_schema
from templates_engine.errors import DefinitionError

from ..properties import examples

_REFS = st.sampled_from(["#/$defs/d0", "#/$defs/d1", "#/$defs/d2", "#/$defs/d3", "#"])
_LEAVES = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "integer"}),
    st.just(True),
    _REFS.map(lambda ref: {"$ref": ref}),
)


def _compound(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, min_size=1, max_size=10).map(lambda xs: {"anyOf": xs}),
        st.lists(children, min_size=1, max_size=10).map(lambda xs: {"oneOf": xs}),
        st.lists(children, min_size=1, max_size=3).map(lambda xs: {"allOf": xs}),
        st.dictionaries(st.sampled_from("abv"), children, min_size=1, max_size=3).map(
            lambda ps: {"type": "object", "properties": ps}
        ),
        st.tuples(children, st.integers(0, 300), st.booleans()).map(
            lambda t: {"type": "array", "items": t[0], "maxItems": t[1], "uniqueItems": t[2]}
        ),
    )


_SUBSCHEMAS = st.recursive(_LEAVES, _compound, max_leaves=25)
SCHEMAS = st.tuples(st.lists(_SUBSCHEMAS, min_size=4, max_size=4), _SUBSCHEMAS).map(
    lambda t: {
        "type": "object",
        "$defs": {f"d{i}": s for i, s in enumerate(t[0])},
        "properties": {"v": t[1], "w": {"$ref": "#/$defs/d0"}},
    }
)
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "a"]))
VALUES = st.recursive(
    _SCALARS,
    lambda c: st.lists(c, max_size=6) | st.dictionaries(st.sampled_from("abvw"), c, max_size=4),
    max_leaves=40,
)


def _values(value: object) -> int:
    """Values in ``value``, its object keys counted too (propertyNames checks them)."""
    if isinstance(value, Mapping):
        return 1 + sum(1 + _values(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_values(v) for v in value)
    return 1


def _most_keywords(schema: object) -> int:
    most, stack = 1, [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            most = max(most, len(node) + 1)  # +1: additionalProperties added by closed()
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return most


def _counting_validator(schema: Mapping[str, Any], counter: list[int]) -> Any:
    def counted(keyword: Any) -> Any:
        def run(validator: Any, value: Any, instance: Any, subschema: Any) -> Iterator[Any]:
            counter[0] += 1
            yield from keyword(validator, value, instance, subschema)

        return run

    original = data_schema._UNIQUE_ITEMS

    def unique(validator: Any, value: Any, instance: Any, subschema: Any) -> Iterator[Any]:
        if isinstance(instance, list):
            counter[0] += len(instance) ** 2  # the pairs it may compare
        yield from original(validator, value, instance, subschema)

    kinds = data_schema.SafeValidator.VALIDATORS
    counting = jsonschema.validators.extend(
        data_schema.SafeValidator, {name: counted(fn) for name, fn in kinds.items()}
    )
    return counting(schema, registry=jsonschema_specifications.REGISTRY), unique


@settings(max_examples=examples(150), deadline=None)
@given(schema=SCHEMAS, value=VALUES, other=VALUES)
def test_a_schema_that_publishes_checks_a_document_within_its_budget(schema, value, other):
    try:
        definition = Definition.parse(
            {
                "key": "budget",
                "schema": schema,
                "steps": [{"id": "w", "kind": "wait", "duration": 1}],
            }
        )
    except DefinitionError as refused:
        event(f"refused: {refused.problem.split(';')[0][:40]}")
        return
    event("published")
    document = {"v": value, "w": other}
    counter = [0]
    validator, unique = _counting_validator(data_schema.closed(schema), counter)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(data_schema, "_UNIQUE_ITEMS", unique)
        list(validator.iter_errors(document))
        definition.data_errors(document)  # what a start runs, with the same keywords

    values = _values(document)
    budget = data_schema.MAX_EXPANDED_NODES * values * _most_keywords(schema) + values**2
    assert counter[0] <= budget


def test_a_chain_of_references_that_would_blow_the_budget_is_refused_before_any_check():
    depth = 4  # ten wide: 10**4 subschemas for one value (6 deep took a minute a start)
    defs: dict[str, Any] = {
        f"l{level}": {"anyOf": [{"$ref": f"#/$defs/l{level + 1}"}] * 10} for level in range(depth)
    }
    defs[f"l{depth}"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"v": {"$ref": "#/$defs/l0"}}}
    counter = [0]
    validator, _ = _counting_validator(schema, counter)

    list(validator.iter_errors({"v": 1}))  # what a start did before: counted, not timed

    assert counter[0] > 10**depth > data_schema.MAX_EXPANDED_NODES
    assert data_schema.schema_problem(schema) == ("$.schema", data_schema.TOO_MANY_NODES)
