"""JSON from outside (API bodies, the admin's definition field), parsed within limits.

PostgreSQL's jsonb refuses ``\\u0000``, psycopg refuses lone surrogates, the routing
rules (CEL) hold integers in signed 64 bits, and ``json.loads`` recurses once per level
of nesting. A value past any of these limits is refused here, with the path that broke
it, before it reaches a service; nothing in this module recurses.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 32
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

TOO_DEEP = f"The JSON is nested deeper than {MAX_DEPTH} levels."
INT_OUT_OF_RANGE = "Number outside the signed 64-bit integer range."
NOT_FINITE = "Number is not finite (NaN and Infinity are not JSON)."
NUL_CHARACTER = "Text contains a NUL character (\\u0000)."
LONE_SURROGATE = "Text contains a lone UTF-16 surrogate."
KEY_PREFIX = "Key "

# A JSON string literal, escapes included (the unrolled-loop form: no backtracking blow-up).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Longer than any 64-bit integer, even negative: parse_int keeps it as text.
_MAX_INT_DIGITS = 20


class JsonInputError(ValueError):
    """A JSON document past a limit: ``path`` (``data.items[2]``, ``$`` for the root)
    and ``problem`` (one of this module's constants)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class _BigInt(str):
    """An integer literal too long to be an int64, kept as text so that parsing never
    meets Python's int-from-string digit limit."""


def nesting_depth_exceeds(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether ``text`` opens more than ``limit`` arrays/objects at once. Counts brackets
    outside string literals; no recursion, linear in the length."""
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def _parse_int(literal: str) -> int | str:
    digits = len(literal.lstrip("-"))
    return _BigInt(literal) if digits > _MAX_INT_DIGITS else int(literal)


def _constant(name: str) -> float:
    # NaN and Infinity are not JSON, but Python reads them: keep them for check_value,
    # which refuses them with their path.
    return float(name)


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return key if path == "$" else f"{path}.{key}"


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return NUL_CHARACTER
    if _SURROGATE.search(text):
        return LONE_SURROGATE
    return None


def check_value(value: Any, root: str = "$") -> None:
    """Raise JsonInputError for the first value past a limit (iteratively)."""
    stack: list[tuple[str, Any, int]] = [(root, value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise JsonInputError(path, TOO_DEEP)
        if isinstance(item, _BigInt):
            raise JsonInputError(path, INT_OUT_OF_RANGE)
        if isinstance(item, bool) or item is None:
            continue
        if isinstance(item, int):
            if not INT64_MIN <= item <= INT64_MAX:
                raise JsonInputError(path, INT_OUT_OF_RANGE)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise JsonInputError(path, NOT_FINITE)
            if not INT64_MIN <= item <= INT64_MAX:  # as the schema says: one range for numbers
                raise JsonInputError(path, INT_OUT_OF_RANGE)
        elif isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                raise JsonInputError(path, problem)
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                problem = _text_problem(str(key))
                if problem:
                    raise JsonInputError(path, KEY_PREFIX + problem[0].lower() + problem[1:])
                stack.append((_child(path, str(key)), child, depth + 1))
        elif isinstance(item, list | tuple):
            for i in reversed(range(len(item))):
                stack.append((_child(path, i), item[i], depth + 1))


def loads(text: str) -> Any:
    """``json.loads`` within this module's limits; JSONDecodeError for text that is not
    JSON, JsonInputError for JSON past a limit."""
    if nesting_depth_exceeds(text):
        raise JsonInputError("$", TOO_DEEP)
    value = json.loads(text, parse_int=_parse_int, parse_constant=_constant)
    check_value(value)
    return value
