"""Conditions in the admin's terms: a step's (or a rule-chosen approver's) ``when`` as
rows of field, operator and value in the field's own units (rupees for a money field, a
choice for an enum, a date for a date), joined by all / any.

``read`` turns a CEL condition into such rows when it can (``data.amountPaise >
10000000`` -> Amount, is over, 100000); ``write`` turns rows back into CEL in minor
units. A condition ``read`` cannot show (parentheses, ``!``, ``in``, arithmetic, a
mix of ``&&`` and ``||``) stays an expression the admin edits as text.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from ..notifications.format import EXPONENTS, SYMBOLS, money_format
from ..words.data import code_words, money_fields
from .present import field_label

# operator -> words, per kind of field
ORDERED = {">": "is over", ">=": "is at least", "<": "is under", "<=": "is at most"}
EQUAL = {"==": "is", "!=": "is not"}
JOINS = {"all": "all of these hold", "any": "any of these holds"}
_CEL_JOIN = {"all": " && ", "any": " || "}
MAX_MONEY_MINOR = 10**15  # far above any amount a form takes, far below CEL's int64

ROW_FIELD_UNKNOWN = "Choose a field to compare."
ROW_OPERATOR_UNKNOWN = "Choose how {label} compares."
ROW_VALUE_MISSING = "Enter the value {label} is compared with."
MONEY_INVALID = "{label}: “{value}” is not an amount; enter one such as 50,000 or 50,000.50."
# A currency without a minor unit (yen): amounts are whole.
MONEY_WHOLE_INVALID = (
    "{label}: “{value}” is not an amount in {currency}, which has no fraction; enter a"
    " whole amount such as 1,500,000."
)
MONEY_TOO_LARGE = "{label}: {value} is more than any request can carry."
NUMBER_INVALID = "{label}: “{value}” is not a number."
WHOLE_INVALID = "{label}: “{value}” is not a whole number."
DATE_INVALID = "{label}: “{value}” is not a date; choose one from the calendar."
CHOICE_INVALID = "{label}: choose one of {choices}."
YES_NO_INVALID = "{label}: choose yes or no."
TEXT_INVALID = "{label}: the text must be on one line."


class BuilderError(ValueError):
    """A row that cannot be written as a condition; the message says why, in words."""


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    kind: str  # money | whole | number | date | choice | yesno | text
    choices: tuple[str, ...] = ()
    currency: str = "INR"  # an amount's: the base currency conditions compare in

    @property
    def exponent(self) -> int:
        return EXPONENTS.get(self.currency, 2)

    @property
    def operators(self) -> dict[str, str]:
        if self.kind in ("money", "whole", "number", "date"):
            return {**ORDERED, **EQUAL}
        return dict(EQUAL)


@dataclass(frozen=True)
class Row:
    field: str
    op: str
    value: str  # as the admin sees and types it: "50000", "INR", "2026-03-31", "yes"


@dataclass(frozen=True)
class Condition:
    join: str  # all | any
    rows: tuple[Row, ...]


def fields_of(schema: Mapping[str, Any] | None, base: str = "INR") -> list[Field]:
    """The data fields a condition may compare, in the schema's order, with labels; an
    amount in units of ``base`` (the currency conditions compare amounts in: whole yen
    for JPY, rupees and paise for INR)."""
    out: list[Field] = []
    money = money_fields(schema)
    for name, spec in ((schema or {}).get("properties") or {}).items():
        if not isinstance(spec, Mapping) or not _NAME.fullmatch(name):
            continue
        label = field_label(schema, name)
        kind = spec.get("type")
        if name in money and kind == "integer":
            out.append(Field(name, label, "money", currency=base))
        elif isinstance(spec.get("enum"), list) and all(isinstance(v, str) for v in spec["enum"]):
            out.append(Field(name, label, "choice", tuple(spec["enum"])))
        elif kind == "integer":
            out.append(Field(name, label, "whole"))
        elif kind == "number":
            out.append(Field(name, label, "number"))
        elif kind == "boolean":
            out.append(Field(name, label, "yesno"))
        elif kind == "string" and spec.get("format") == "date":
            out.append(Field(name, label, "date"))
        elif kind == "string":
            out.append(Field(name, label, "text"))
    return out


# -- CEL -> rows ---------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL = r"-?\d+(?:\.\d+)?|\"(?:[^\"\\\n]|\\[\\\"])*\"|'(?:[^'\\\n]|\\[\\'])*'|true|false"
_ROW = re.compile(
    rf"\s*data\.(?P<field>{_NAME.pattern})\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>{_LITERAL})\s*"
)


def _split(cel: str) -> tuple[str, list[str]] | None:
    """The comparisons of ``cel`` and how they join; None when it mixes && and ||. Quoted
    text is skipped so an ``&&`` inside a string does not split."""
    parts, joins, start, i = [], set(), 0, 0
    while i < len(cel):
        ch = cel[i]
        if ch in "\"'":
            end = i + 1
            while end < len(cel) and cel[end] != ch:
                end += 2 if cel[end] == "\\" else 1
            i = end + 1
            continue
        if cel.startswith("&&", i) or cel.startswith("||", i):
            joins.add("all" if ch == "&" else "any")
            parts.append(cel[start:i])
            i += 2
            start = i
            continue
        i += 1
    parts.append(cel[start:])
    if len(joins) > 1:
        return None
    return (joins.pop() if joins else "all"), parts


def _unquote(literal: str) -> str:
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def _shown(field: Field, literal: str) -> str | None:
    """The value as the admin types it, or None when the literal does not fit the field."""
    quoted = literal[:1] in "\"'"
    if field.kind == "money":
        if quoted or not re.fullmatch(r"-?\d+", literal):
            return None
        return money_text(int(literal), field.currency)
    if field.kind == "whole":
        return literal if re.fullmatch(r"-?\d+", literal) else None
    if field.kind == "number":
        return None if quoted or literal in ("true", "false") else literal
    if field.kind == "yesno":
        return {"true": "yes", "false": "no"}.get(literal)
    if not quoted:
        return None
    text = _unquote(literal)
    if field.kind == "choice":
        return text if text in field.choices else None
    if field.kind == "date":
        return text if _date(text) else None
    return text


def read(cel: str | None, schema: Mapping[str, Any] | None, base: str = "INR") -> Condition | None:
    """``cel`` as rows, or None when it cannot be shown that way. An empty condition is
    no rows (always). Amounts are shown in units of ``base``."""
    if not cel or not cel.strip():
        return Condition("all", ())
    split = _split(cel)
    if split is None:
        return None
    join, parts = split
    fields = {f.name: f for f in fields_of(schema, base)}
    rows = []
    for part in parts:
        m = _ROW.fullmatch(part)
        if m is None or m["field"] not in fields:
            return None
        field = fields[m["field"]]
        if m["op"] not in field.operators:
            return None
        value = _shown(field, m["value"])
        if value is None:
            return None
        rows.append(Row(field.name, m["op"], value))
    return Condition(join, tuple(rows))


# -- rows -> CEL ---------------------------------------------------------------------------


def money_text(minor: int, currency: str = "INR") -> str:
    """``5000000`` -> ``50,000``; ``5000050`` -> ``50,000.50``: the amount as the form
    shows it in ``currency``, grouped as the rest of the product does (lakhs and crores
    for rupees), without the sign and without a fraction of zeros; a currency with no
    minor unit (yen) never has one: ``1500000`` JPY -> ``1,500,000``."""
    exponent = EXPONENTS.get(currency, 2)
    shown = money_format(minor=minor, currency=currency)
    shown = shown.replace(SYMBOLS.get(currency, currency), "", 1).replace(" ", "")
    zeros = "." + "0" * exponent
    return shown.removesuffix(zeros) if exponent else shown


def money_minor(text: str, exponent: int = 2) -> int | None:
    """``"₹50,000"`` / ``"50000.5"`` -> minor units; None when it is not an amount."""
    cleaned = re.sub(r"[\s,₹$€£]|^Rs\.?", "", text.strip())
    if not re.fullmatch(r"-?\d{1,20}(\.\d+)?", cleaned):
        return None
    try:
        minor = Decimal(cleaned).scaleb(exponent)
    except InvalidOperation:
        return None
    if minor != minor.to_integral_value():
        return None
    return int(minor)


def _date(text: str) -> dt.date | None:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _literal(field: Field, value: str) -> str:  # noqa: PLR0911 - one per kind
    # Text is compared as typed: its spaces, leading, trailing or alone, are part of the
    # value and read back as they were written. Other kinds are parsed, spaces aside.
    if field.kind != "text":
        value = value.strip()
    words = {"label": field.label, "value": value}
    if field.kind == "money":
        minor = money_minor(value, field.exponent)
        if minor is None and not field.exponent:
            raise BuilderError(MONEY_WHOLE_INVALID.format(currency=field.currency, **words))
        if minor is None:
            raise BuilderError(MONEY_INVALID.format(**words))
        if abs(minor) > MAX_MONEY_MINOR:
            raise BuilderError(MONEY_TOO_LARGE.format(**words))
        return str(minor)
    if field.kind == "whole":
        if not re.fullmatch(r"-?\d{1,15}", value):
            raise BuilderError(WHOLE_INVALID.format(**words))
        return str(int(value))
    if field.kind == "number":
        if not re.fullmatch(r"-?\d{1,15}(\.\d{1,10})?", value):
            raise BuilderError(NUMBER_INVALID.format(**words))
        return value
    if field.kind == "yesno":
        if value not in ("yes", "no"):
            raise BuilderError(YES_NO_INVALID.format(**words))
        return "true" if value == "yes" else "false"
    if field.kind == "choice" and value not in field.choices:
        choices = ", ".join(code_words(c) for c in field.choices)
        raise BuilderError(CHOICE_INVALID.format(label=field.label, choices=choices))
    if field.kind == "date" and _date(value) is None:
        raise BuilderError(DATE_INVALID.format(**words))
    if any(ord(c) < 32 for c in value):
        raise BuilderError(TEXT_INVALID.format(**words))
    return _quote(value)


def write(condition: Condition, schema: Mapping[str, Any] | None, base: str = "INR") -> str:
    """The CEL for ``condition`` (amounts typed in units of ``base``, written in its
    minor units); "" for no rows. Raises :class:`BuilderError` for a row it cannot
    write."""
    fields = {f.name: f for f in fields_of(schema, base)}
    parts = []
    for row in condition.rows:
        field = fields.get(row.field)
        if field is None:
            raise BuilderError(ROW_FIELD_UNKNOWN)
        if row.op not in field.operators:
            raise BuilderError(ROW_OPERATOR_UNKNOWN.format(label=field.label))
        if not row.value.strip() and field.kind != "text":
            raise BuilderError(ROW_VALUE_MISSING.format(label=field.label))
        parts.append(f"data.{field.name} {row.op} {_literal(field, row.value)}")
    return _CEL_JOIN.get(condition.join, " && ").join(parts)


_MAX_ROWS = 50


def rows_from_post(post: Mapping[str, Any], prefix: str) -> tuple[str, list[Row]]:
    """The join and the filled rows a builder named ``prefix`` posted (``<prefix>-join``,
    ``<prefix>-<n>-field``, ``-op``, ``-value``); a row without a field is dropped."""
    join = str(post.get(f"{prefix}-join") or "all")
    rows = []
    for n in range(_MAX_ROWS):
        field = post.get(f"{prefix}-{n}-field")
        if field is None:
            break
        if not field:
            continue
        rows.append(
            Row(
                str(field),
                str(post.get(f"{prefix}-{n}-op") or ""),
                str(post.get(f"{prefix}-{n}-value") or ""),
            )
        )
    return join, rows


def field_list(schema: Mapping[str, Any] | None, base: str = "INR") -> list[str]:
    """The fields an expression may read, for the admin writing one by hand; an amount
    is read in minor units of the ``base`` currency (templates_engine.money)."""
    out = []
    for field in fields_of(schema, base):
        one = money_format(minor=10 ** EXPONENTS.get(base, 2), currency=base)
        unit = {
            "money": f" (in minor units of {base}: {one} is {10 ** EXPONENTS.get(base, 2)})",
            "date": ' (a date written as "2026-03-31")',
            "choice": ": one of " + ", ".join(f'"{c}"' for c in field.choices),
            "yesno": " (true or false)",
        }.get(field.kind, "")
        out.append(f"data.{field.name}: {field.label}{unit}")
    return out


def known_operators(fields: Sequence[Field]) -> dict[str, str]:
    """Every operator any of ``fields`` offers, with its words."""
    offered = {op for field in fields for op in field.operators}
    return {op: words for op, words in {**ORDERED, **EQUAL}.items() if op in offered}
