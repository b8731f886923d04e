"""What a definition names outside itself: groups, users, activities, and the data
fields its conditions read. The engine only lists them (it knows no directory); the app
checks each against the tenant's tables when a version is published, and the system
check does again later, so a group deleted after publishing is found.

A definition must already parse (``Definition.parse``): the walk trusts its shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

GROUP, USER, ACTIVITY, FIELD = "group", "user", "activity", "field"

# ``data.amountPaise`` and ``data["amountPaise"]`` (CEL's two ways to read a field).
_DOT_FIELD = re.compile(r"\bdata\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)")
_INDEX_FIELD = re.compile(r"""\bdata\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]""")
_STRING = re.compile(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""")


@dataclass(frozen=True)
class Reference:
    path: str  # the JSON path of the value that names it
    kind: str  # group | user | activity | field
    name: str


def condition_fields(source: str) -> list[str]:
    """The top-level data fields a CEL condition reads, in order of appearance.
    String literals are blanked first, so ``"data.x"`` inside quotes names nothing."""
    indexed = [a or b for a, b in _INDEX_FIELD.findall(source)]
    code = _STRING.sub('""', _INDEX_FIELD.sub("data", source))
    names = indexed + _DOT_FIELD.findall(code)
    return list(dict.fromkeys(names))


# Fields the engine itself writes into the data: each action step's result.
ENGINE_FIELDS = frozenset({"results"})


def schema_fields(doc: Mapping[str, Any]) -> set[str] | None:
    """The data fields a condition may read: those the definition declares and those
    the engine writes; None when any field is allowed (no schema, or
    ``allow_undeclared_fields``)."""
    schema = doc.get("schema")
    if not isinstance(schema, Mapping) or doc.get("allow_undeclared_fields", False):
        return None
    properties = schema.get("properties")
    return (
        set(properties) | ENGINE_FIELDS if isinstance(properties, Mapping) else set(ENGINE_FIELDS)
    )


def _rules(rules: Any, path: str) -> Iterator[Reference]:
    if isinstance(rules, Mapping):
        rules = [rules]
        paths = [path]
    else:
        paths = [f"{path}[{i}]" for i in range(len(rules or []))]
    for rule, rule_path in zip(rules or [], paths, strict=True):
        for kind in (GROUP, USER):
            if isinstance(rule, Mapping) and isinstance(rule.get(kind), str):
                yield Reference(f"{rule_path}.{kind}", kind, rule[kind])


def references(doc: Mapping[str, Any]) -> Iterator[Reference]:
    """Every group, user, activity and data field ``doc`` names, with its path."""
    for i, step in enumerate(doc.get("steps") or []):
        path = f"$.steps[{i}]"
        if isinstance(step.get("when"), str):
            for name in condition_fields(step["when"]):
                yield Reference(f"{path}.when", FIELD, name)
        for key in ("approvers", "fallback", "escalate_to", "senders"):
            if key in step:
                yield from _rules(step[key], f"{path}.{key}")
        for j, rule in enumerate(step.get("approvers") or []):
            if isinstance(rule, Mapping) and isinstance(rule.get("when"), str):
                for name in condition_fields(rule["when"]):
                    yield Reference(f"{path}.approvers[{j}].when", FIELD, name)
        if isinstance(step.get("activity"), str):
            yield Reference(f"{path}.activity", ACTIVITY, step["activity"])
        undo = step.get("compensate")
        if isinstance(undo, str):
            yield Reference(f"{path}.compensate", ACTIVITY, undo)
        elif isinstance(undo, Mapping) and isinstance(undo.get("activity"), str):
            yield Reference(f"{path}.compensate.activity", ACTIVITY, undo["activity"])
