"""JSON from outside (API bodies, the admin's definition field), parsed within limits.

PostgreSQL's jsonb refuses ``\\u0000``, psycopg refuses lone surrogates, the routing
rules (CEL) hold integers in signed 64 bits, and ``json.loads`` recurses once per level
of nesting. A value past any of these limits is refused here, with the path that broke
it, before it reaches a service; nothing in this module recurses.

Numbers have one form: the one PostgreSQL's jsonb gives back (``stored_form``). The
value ``loads`` returns is already in it, and the event hash (``runtime.chain``) is
taken over it, so a chain verifies after storage whatever spelling a client sent.
"""

from __future__ import annotations

import decimal
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


# The canonical form of a number, in storage and in the event hash, is the one jsonb
# gives back. jsonb keeps a number as PostgreSQL's ``numeric``, from the text Python
# writes (``repr``), and writes it back in plain notation without a sign on zero:
# - a float from 1e16 up in magnitude is written ``1e+16``, ``1.5e+17``…: jsonb gives
#   it back as the integer that decimal text says (``10000000000000000``), which is not
#   always the float's own binary value;
# - ``-0.0`` comes back as ``0.0``;
# - every other float comes back as the same float (``1.0`` stays ``1.0``, ``1e-07``
#   comes back ``0.0000001``, the same value).
# So integral floats are not turned into integers in general (``1.0`` keeps its
# form, as jsonb keeps it); only those jsonb itself turns into integers are. The door
# (``loads``) gives this form to what the engine validates and routes on, and the chain
# hashes it (docs/audit.md, "Numbers").
_PLAIN_FLOAT_LIMIT = 1e16  # from here up, ``repr`` uses an exponent


def _restated(value: float) -> bool:
    """Whether jsonb gives ``value`` back in another form."""
    if value == 0:
        return math.copysign(1.0, value) < 0
    return math.isfinite(value) and not -_PLAIN_FLOAT_LIMIT < value < _PLAIN_FLOAT_LIMIT


def _stored_number(value: float) -> float | int:
    if not _restated(value):
        return value
    # The integer of the decimal ``repr`` wrote (what jsonb read), not of the binary
    # float: 4.923964651532707e+16 is stored as 49239646515327070, not ...072.
    return 0.0 if value == 0 else int(decimal.Decimal(repr(value)))


def _needs_restating(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if _restated(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def stored_form(value: Any) -> Any:
    """``value`` as PostgreSQL's jsonb gives it back: the numbers it restates (see
    above) in that form, in copies of the lists and objects holding them; ``value``
    itself when nothing changes (iteratively)."""
    if not _needs_restating(value):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, float):
            holder[key] = _stored_number(item)
        elif isinstance(item, dict):
            copy = dict(item)
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(item, list | tuple):
            items = list(item)
            holder[key] = items
            stack.extend((items, i) for i in range(len(items)))
    return root[0]


def loads(text: str) -> Any:
    """``json.loads`` within this module's limits, its numbers in their stored form
    (``stored_form``); JSONDecodeError for text that is not JSON, JsonInputError for
    JSON past a limit."""
    if nesting_depth_exceeds(text):
        raise JsonInputError("$", TOO_DEEP)
    value = json.loads(text, parse_int=_parse_int, parse_constant=_constant)
    check_value(value)
    return stored_form(value)
