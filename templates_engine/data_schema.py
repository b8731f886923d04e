"""Workflow data schemas are closed by default: an object schema that does not say
``additionalProperties`` refuses fields it does not declare, so a typo in a field name
is an error at start and not a silently ignored value. A definition opts out with the
top-level ``"allow_undeclared_fields": true``."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs in requirements/test.in
import jsonschema_specifications  # type: ignore[import-untyped]
import re2  # type: ignore[import-untyped]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

# Keywords whose value is one subschema, a list of them, or a name -> subschema map.
_ONE = ("items", "additionalItems", "contains", "not", "if", "then", "else", "propertyNames")
_LIST = ("prefixItems",)
_MAP = ("properties", "$defs", "definitions")
# Saying any of these is saying what undeclared fields may be: leave the schema open.
_OPENERS = ("additionalProperties", "patternProperties", "unevaluatedProperties")


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    declares_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
    return declares_object or "properties" in schema


def closed(schema: Any) -> Any:
    """A copy of ``schema`` with ``additionalProperties: false`` on every object schema
    that does not say otherwise. Branches of ``allOf``/``anyOf``/``oneOf`` stay as they
    are: closing each branch would refuse the fields the other branches declare."""
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    for name in _ONE:
        if name in out:
            out[name] = closed(out[name])
    for name in _LIST:
        if isinstance(out.get(name), list):
            out[name] = [closed(s) for s in out[name]]
    for name in _MAP:
        if isinstance(out.get(name), Mapping):
            out[name] = {k: closed(s) for k, s in out[name].items()}
    if _is_object_schema(out) and not any(name in out for name in _OPENERS):
        out["additionalProperties"] = False
    return out


# -- what a data schema may do when data is checked against it ---------------------------
#
# Data is checked on every start, by any employee: a schema may not fetch anything (a
# ``$ref`` to a URL would be fetched inside the start's transaction) and its regular
# expressions run on RE2, whose time is linear in the text (Python's ``re`` backtracks:
# ``^(a+)+$`` on 26 characters takes seconds).

REMOTE_REF = (
    "refers to {ref!r} outside the schema; only references inside it (starting with '#')"
    " are allowed, so checking data never reaches the network"
)
PATTERN_NOT_RE2 = (
    "{pattern!r} cannot be used: patterns run on a linear-time engine (RE2), which does"
    " not take it ({why})"
)
UNEVALUATED_WITH_PATTERNS = (
    "unevaluatedProperties cannot be combined with patternProperties; list the fields in"
    " properties instead"
)
_REFS = ("$ref", "$dynamicRef", "$recursiveRef")
# Keywords whose value is data, not a subschema: their contents are not keywords.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False
    return options


_RE2_OPTIONS = _re2_options()


@functools.lru_cache(maxsize=512)
def compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (raises ``re2.error`` when RE2 cannot take it)."""
    return re2.compile(pattern, _RE2_OPTIONS)


def _re2_problem(pattern: object) -> str | None:
    if not isinstance(pattern, str):
        return None  # the meta-schema check says what is wrong
    try:
        compiled(pattern)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        text = why.decode(errors="replace") if isinstance(why, bytes) else str(why)
        return PATTERN_NOT_RE2.format(pattern=pattern, why=text)
    return None


def schema_problem(schema: object) -> tuple[str, str] | None:
    """The first thing in ``schema`` that checking data could not do safely, as
    (JSON path, problem): a reference outside the schema, a pattern RE2 cannot take,
    unevaluatedProperties beside patternProperties, or work without a bound
    (``expansion_problem``). None when it is safe."""
    stack: list[tuple[str, object]] = [("$.schema", schema)]
    uses_unevaluated = uses_patterns = None
    while stack:
        path, node = stack.pop()
        if isinstance(node, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(node))
            continue
        if not isinstance(node, Mapping):
            continue
        for name in _REFS:
            ref = node.get(name)
            if isinstance(ref, str) and not ref.startswith("#"):
                return f"{path}.{name}", REMOTE_REF.format(ref=ref)
        if (problem := _re2_problem(node.get("pattern"))) is not None:
            return f"{path}.pattern", problem
        patterns = node.get("patternProperties")
        if isinstance(patterns, Mapping):
            uses_patterns = uses_patterns or f"{path}.patternProperties"
            for key in patterns:
                if (problem := _re2_problem(key)) is not None:
                    return f"{path}.patternProperties", problem
        if "unevaluatedProperties" in node:
            uses_unevaluated = uses_unevaluated or f"{path}.unevaluatedProperties"
        stack.extend((f"{path}.{k}", v) for k, v in node.items() if str(k) not in _DATA_KEYWORDS)
    if uses_unevaluated and uses_patterns:
        return uses_unevaluated, UNEVALUATED_WITH_PATTERNS
    return expansion_problem(schema) if isinstance(schema, Mapping) else None


# -- how much work checking data may take ------------------------------------------------
#
# Checking data applies every subschema reachable from the root, following each ``$ref``
# anew, to the part of the data it describes: a chain of definitions with ten ``$ref``
# branches per level applies a million subschemas to one value. The schema is expanded
# once at publish, every ``$ref`` followed, and refused past ``MAX_EXPANDED_NODES``
# subschemas; then checking a document takes at most that many subschema checks per value
# in it. Recursion (a ``$ref`` back to a schema it is inside) is refused outright: an
# approval form's data has a fixed shape, and each level can be written out.

MAX_EXPANDED_NODES = 2000
MAX_BRANCHES = 50
MAX_UNIQUE_ITEMS = 200

MISSING_REF = "refers to {ref!r}, which is not in the schema"
CYCLIC_REF = (
    "refers to {ref!r}, which leads back to this reference; recursive schemas are not allowed for"
    " approval forms (their data has a fixed shape), so write each level out"
)
DYNAMIC_REF = "is not supported in a data schema; use $ref to a definition under $defs"
INNER_ID = "is not supported inside a data schema; refer to subschemas as '#/$defs/NAME' instead"
TOO_MANY_NODES = (
    f"expands to more than {MAX_EXPANDED_NODES} subschemas once every $ref is followed, so"
    " checking the data of one start could take minutes; use fewer references or fewer"
    " anyOf/oneOf branches"
)
TOO_MANY_BRANCHES = f"has more than {MAX_BRANCHES} branches; use enum for a list of choices"
UNIQUE_WITHOUT_MAX = (
    f"needs maxItems of at most {MAX_UNIQUE_ITEMS} beside it: telling items apart compares"
    " every pair"
)

# Where each keyword keeps its subschemas (draft 2020-12, and the older spellings).
_SUB_ONE = (
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_SUB_LIST = ("prefixItems", "allOf", "anyOf", "oneOf", "items")
_SUB_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_BRANCHING = ("anyOf", "oneOf")


def _subschemas(path: str, node: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for name in _SUB_ONE:
        if isinstance(node.get(name), Mapping | bool):
            yield f"{path}.{name}", node[name]
    for name in _SUB_LIST:
        if isinstance(node.get(name), list):
            yield from ((f"{path}.{name}[{i}]", s) for i, s in enumerate(node[name]))
    for name in _SUB_MAP:
        if isinstance(node.get(name), Mapping):
            yield from ((f"{path}.{name}.{k}", s) for k, s in node[name].items())
    dependencies = node.get("dependencies")
    if isinstance(dependencies, Mapping):
        for k, s in dependencies.items():
            if isinstance(s, Mapping):
                yield f"{path}.dependencies.{k}", s


def _anchors(schema: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    found: dict[str, tuple[str, Any]] = {}
    stack: list[tuple[str, Any]] = [("$.schema", schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        for name in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(name), str):
                found.setdefault(node[name], (path, node))
        stack.extend(_subschemas(path, node))
    return found


_ESCAPED = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _unquoted(text: str) -> str:
    """``text`` with its %XX escapes decoded as UTF-8 (a URI fragment)."""
    return _ESCAPED.sub(
        lambda m: bytes.fromhex(m.group().replace("%", "")).decode(errors="replace"), text
    )


def _resolve(
    ref: str, schema: Mapping[str, Any], anchors: Mapping[str, tuple[str, Any]]
) -> tuple[str, Any] | None:
    """The (JSON path, subschema) a local reference names, or None."""
    fragment = _unquoted(ref[1:])
    if fragment and not fragment.startswith("/"):
        return anchors.get(fragment)
    path, node = "$.schema", schema
    for part in fragment.split("/")[1:]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node, path = node[key], f"{path}.{key}"
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node, path = node[int(key)], f"{path}[{key}]"
        else:
            return None
    return (path, node) if isinstance(node, Mapping | bool) else None


def expansion_problem(schema: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first reason checking data against ``schema`` could take unbounded work, as
    (JSON path, problem): a local reference that is missing, dynamic or leads back to
    itself, an ``$id`` inside the schema, too many anyOf/oneOf branches, uniqueItems
    without a small maxItems, or more than ``MAX_EXPANDED_NODES`` subschemas once every
    reference is followed. None when checking is bounded."""
    anchors = _anchors(schema)
    count = 0
    # (JSON path, node, the ids of the subschemas it is inside, following references)
    stack: list[tuple[str, Any, frozenset[int]]] = [("$.schema", schema, frozenset())]
    while stack:
        path, node, inside = stack.pop()
        if not isinstance(node, Mapping):
            continue
        count += 1
        if count > MAX_EXPANDED_NODES:
            return "$.schema", TOO_MANY_NODES
        if "$id" in node and path != "$.schema":
            return f"{path}.$id", INNER_ID
        for name in ("$dynamicRef", "$recursiveRef"):
            if name in node:
                return f"{path}.{name}", DYNAMIC_REF
        for name in _BRANCHING:
            if isinstance(node.get(name), list) and len(node[name]) > MAX_BRANCHES:
                return f"{path}.{name}", TOO_MANY_BRANCHES
        if node.get("uniqueItems") is True:
            most = node.get("maxItems")
            if isinstance(most, bool) or not isinstance(most, int) or most > MAX_UNIQUE_ITEMS:
                return f"{path}.uniqueItems", UNIQUE_WITHOUT_MAX
        inside = inside | {id(node)}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = _resolve(ref, schema, anchors)
            if target is None:
                return f"{path}.$ref", MISSING_REF.format(ref=ref)
            if id(target[1]) in inside:
                return f"{path}.$ref", CYCLIC_REF.format(ref=ref)
            stack.append((*target, inside))
        stack.extend((p, s, inside) for p, s in _subschemas(path, node))
    return None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _matched_by_a_pattern(schema: Mapping[str, Any], name: str) -> bool:
    return any(compiled(p).search(name) for p in schema.get("patternProperties", {}))


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if compiled(pattern).search(name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    declared = schema.get("properties", {})
    extras = [
        name
        for name in instance
        if name not in declared and not _matched_by_a_pattern(schema, name)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            names = ", ".join(repr(each) for each in sorted(extras, key=str))
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({names} {verb} unexpected)"
            )


_UNIQUE_ITEMS = jsonschema.Draft202012Validator.VALIDATORS["uniqueItems"]


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """uniqueItems, skipped on an array already longer than its maxItems (which says what
    is wrong): telling items apart compares every pair, and publish requires the
    maxItems (``expansion_problem``)."""
    most = schema.get("maxItems")
    too_long = isinstance(most, int) and validator.is_type(instance, "array")
    if too_long and len(instance) > most:
        return
    yield from _UNIQUE_ITEMS(validator, unique, instance, schema)


# -- checking one start's data: a budget of steps ------------------------------------------
#
# Publish bounds the schema (``expansion_problem``); the data is the other factor: each
# value in it meets up to ``MAX_EXPANDED_NODES`` subschemas. Checking one document is
# stopped after ``MAX_CHECK_STEPS`` keyword checks (the engine reads no clock, so the
# budget is counted, not timed) and the start refused in words, whatever the two make.

MAX_CHECK_STEPS = 100_000
CHECK_TOO_COSTLY = (
    f"$: checking this data against the workflow template's schema took more than"
    f" {MAX_CHECK_STEPS:,} steps, so it was stopped; send less data (fewer or shorter"
    " lists), or ask the workflow template's owner for a simpler schema"
)

_steps_left: ContextVar[list[int] | None] = ContextVar("data_schema_steps_left", default=None)


class CheckTooCostly(Exception):
    """Checking a document ran out of its ``MAX_CHECK_STEPS``."""


def _counted(check: Any) -> Any:
    """``check`` (one keyword's), counted against the running check's budget."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        left = _steps_left.get()
        if left is not None:
            left[0] -= 1
            if left[0] < 0:
                raise CheckTooCostly
        found = check(validator, value, instance, schema)
        if found is not None:
            yield from found

    return run


def data_problems(validator: Any, data: Any, budget: int | None = None) -> list[ValidationError]:
    """Every error of ``data`` against ``validator``'s schema; raises CheckTooCostly
    past ``budget`` keyword checks (``MAX_CHECK_STEPS`` unless given)."""
    token = _steps_left.set([MAX_CHECK_STEPS if budget is None else budget])
    try:
        return list(validator.iter_errors(data))
    finally:
        _steps_left.reset(token)


# Draft 2020-12 with its regular expressions on RE2 and uniqueItems within maxItems,
# every keyword counted against the check's budget.
SafeValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {
        name: _counted(check)
        for name, check in {
            **jsonschema.Draft202012Validator.VALIDATORS,
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
            "uniqueItems": _unique_items,
        }.items()
    },
)


def data_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for ``schema`` that can never fetch anything: its registry holds the
    meta-schemas only and refuses to retrieve any other URI."""
    return SafeValidator(schema, registry=jsonschema_specifications.REGISTRY)
