"""Workflow data schemas are closed by default: an object schema that does not say
``additionalProperties`` refuses fields it does not declare, so a typo in a field name
is an error at start and not a silently ignored value. A definition opts out with the
top-level ``"allow_undeclared_fields": true``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
