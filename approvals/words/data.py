"""How a workflow's data reads to people, field by field as its workflow template's data
schema declares it (money in currency units from minor units, dates, enum values in
words), and the request's one-line summary and amount that the inbox lists.

A base helper, not a page's: the command path projects the summary and the amount onto
the workflow row when the data is set (``runtime.commands``), a rebuild derives them
again, and the pages (``web.present``) format data with the same functions.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from templates_engine import Definition
from templates_engine.summary import summary_fields

from ..notifications.format import money_format, one_line

MONEY_KEY = "x-money"
# A field a workflow template marks to show on each inbox row (department, vendor).
ROW_KEY = "x-row"
# A field a workflow template marks as one of the organisation's kept lists:
# ``"x-list": "departments"`` (approvals.models.Department).
LIST_KEY = "x-list"
DEPARTMENTS = "departments"
# An organisation's kept lists by name (``departments``) -> each entry's key -> its
# name: a value of a field marked ``"x-list"`` is shown by its entry's name.
KeptLists = Mapping[str, Mapping[str, str]]
DEFAULT_CURRENCY = "INR"
# What the inbox shows of a summary line at most; the workflow page shows the data.
SUMMARY_MAX = 200
ELLIPSIS = "…"
# A field left empty leaves its separators behind: trimmed from the ends of the line.
_LOOSE_ENDS = " \t,;:·-–—/|"
_SPACES = re.compile(r"\s{2,}")
# The fraction of a whole amount (``₹45,000.00``), which the subject line leaves out.
_ZERO_FRACTION = re.compile(r"\.0+$")


def code_words(value: str) -> str:
    """An enum value in words: ``IT_HARDWARE`` -> ``IT hardware``, ``SOFTWARE`` ->
    ``Software``; a short code such as a currency (``INR``) stays as it is."""
    if not ("_" in value or (value.isupper() and len(value) > 3)):
        return value
    words = [w for w in value.split("_") if w]
    out = [w if len(w) <= 2 and w.isupper() else w.lower() for w in words]
    if out and out[0].islower():
        out[0] = out[0].capitalize()
    return " ".join(out)


def money_fields(schema: Mapping[str, Any] | None) -> dict[str, str]:
    """Integer fields annotated ``"x-money": {"currency": FIELD}`` -> the currency field
    (an empty string when the annotation names none: rupees)."""
    out: dict[str, str] = {}
    for name, spec in ((schema or {}).get("properties") or {}).items():
        money = spec.get(MONEY_KEY) if isinstance(spec, Mapping) else None
        if isinstance(money, Mapping):
            currency = money.get("currency")
            out[name] = currency if isinstance(currency, str) else ""
        elif money is True:
            out[name] = ""
    return out


def row_fields(schema: Mapping[str, Any] | None) -> list[str]:
    """The fields marked ``"x-row": true``, in the schema's order."""
    props = (schema or {}).get("properties") or {}
    return [n for n, spec in props.items() if isinstance(spec, Mapping) and spec.get(ROW_KEY)]


def department_fields(schema: Mapping[str, Any] | None) -> list[str]:
    """The string fields marked ``"x-list": "departments"``, in the schema's order."""
    props = (schema or {}).get("properties") or {}
    return [
        n
        for n, spec in props.items()
        if isinstance(spec, Mapping)
        and spec.get(LIST_KEY) == DEPARTMENTS
        and spec.get("type") == "string"
    ]


def currency_of(data: Mapping[str, Any], currency_field: str) -> str:
    value = data.get(currency_field) if currency_field else None
    return value if isinstance(value, str) and value else DEFAULT_CURRENCY


def format_value(
    schema: Mapping[str, Any] | None,
    data: Mapping[str, Any],
    name: str,
    lists: KeptLists | None = None,
) -> str:
    """``data[name]`` as people read it; with ``lists``, a kept list's key by its name
    (``sales`` -> ``Sales``)."""
    value = data.get(name)
    money = money_fields(schema)
    if name in money and isinstance(value, int) and not isinstance(value, bool):
        return money_format(minor=value, currency=currency_of(data, money[name]))
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if value is None:
        return ""
    spec = ((schema or {}).get("properties") or {}).get(name)
    if lists and isinstance(spec, Mapping) and isinstance(value, str):
        kept = lists.get(str(spec.get(LIST_KEY)))
        if kept and value in kept:
            return kept[value]
    if isinstance(spec, Mapping) and "enum" in spec and isinstance(value, str):
        return code_words(value)
    if isinstance(value, str) and isinstance(spec, Mapping) and spec.get("format") == "date":
        try:
            parsed = dt.date.fromisoformat(value)
        except ValueError:
            return value
        return f"{parsed.day} {parsed:%b %Y}"
    return str(value)


# -- the inbox's line and amount -------------------------------------------------------------


def summary_line(
    *,
    title: str,
    summary: str | None,
    schema: Mapping[str, Any] | None,
    subject_id: str,
    data: Mapping[str, Any],
) -> str:
    """The request in one line: the workflow template's ``summary`` (already checked by
    ``templates_engine.summary``) filled with the data's values as people read them; a
    field the data lacks reads as nothing, and its separators go with it at the ends.
    Without a summary, or when it comes out empty: the title and the subject's
    reference (``Expense claim R-8``)."""
    line = ""
    if summary:
        try:
            line = summary.format_map(
                {n: one_line(format_value(schema, data, n)) for n in summary_fields(summary)}
            )
        except (KeyError, IndexError, ValueError, AttributeError):
            line = ""  # a definition parsed under older rules: the default line
        line = _SPACES.sub(" ", one_line(line)).strip(_LOOSE_ENDS)
    if not line:
        line = one_line(f"{title} {subject_id}".strip())
    if len(line) > SUMMARY_MAX:
        line = line[: SUMMARY_MAX - 1].rstrip() + ELLIPSIS
    return line


def amount_line(schema: Mapping[str, Any] | None, data: Mapping[str, Any]) -> str:
    """The request's amount, formatted (``₹45,000.00``): its first money field the
    data holds; empty when it holds none."""
    for name in money_fields(schema):
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return format_value(schema, data, name)
    return ""


def subject_line(*, title: str, subject_id: str, amount: str) -> str:
    """The request as the specification names it in one line: its title, reference and
    amount, a whole amount without its zero fraction (``Expense exp_88213, ₹45,000``);
    without an amount, the title and reference."""
    line = one_line(f"{title} {subject_id}".strip())
    if amount:
        line = f"{line}, {_ZERO_FRACTION.sub('', amount)}"
    return line


def workflow_summary(
    definition: Definition, subject_id: str, data: Mapping[str, Any]
) -> tuple[str, str]:
    """(summary, amount) of a workflow under its pinned ``definition``: the columns the
    command path projects onto the workflow row and a rebuild derives again."""
    return (
        summary_line(
            title=definition.title,
            summary=definition.summary,
            schema=definition.schema,
            subject_id=subject_id,
            data=data,
        ),
        amount_line(definition.schema, data),
    )


def file_size(size: int) -> str:
    """A file's size as people read it: ``812 bytes``, ``120 KB``, ``2.5 MB``."""
    if size < 1024:
        return "1 byte" if size == 1 else f"{size} bytes"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f}".removesuffix(".0") + " MB"
