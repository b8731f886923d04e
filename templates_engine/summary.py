"""A workflow template's summary line: one line that says what a request is about, for
an inbox item (``"summary": "{description}, {amountPaise}"``).

The line is a format string whose ``{name}`` fields name fields of the data schema;
the app fills each with its field's value as people read it (money in currency units,
dates, enum values in words). Only plain names are allowed: no ``{a.b}``, ``{a[0]}``,
conversions or format specs, so a definition cannot reach into a value's attributes.
Without a summary the app reads the workflow template's title and the subject's
reference.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

from .errors import DefinitionError

PATH = "$.summary"
MAX_LENGTH = 200

NOT_TEXT = "must be a non-empty string of at most 200 characters"
UNREADABLE = "is not a format string: {problem} (write {{{{ and }}}} for a brace)"
EMPTY_FIELD = "each {} must name a data field, as in {description}"
NOT_A_NAME = "{field!r} is not a plain field name: write {{name}} with nothing else"
UNKNOWN_FIELD = "names {{{field}}}, which is not a field of the data schema"


def summary_fields(line: str) -> list[str]:
    """The field names ``line`` reads, in order (a field read twice is listed twice)."""
    return [name for _, name, _, _ in string.Formatter().parse(line) if name is not None]


def parse_summary(value: object, schema: Mapping[str, Any] | None) -> str | None:
    """The definition's summary line, checked against the data ``schema``; None when
    the definition has none. Raises DefinitionError at ``$.summary``."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_LENGTH:
        raise DefinitionError(PATH, NOT_TEXT)
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as exc:
        raise DefinitionError(PATH, UNREADABLE.format(problem=exc)) from exc
    properties = (schema or {}).get("properties") or {}
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if not name:
            raise DefinitionError(PATH, EMPTY_FIELD)
        if not name.isidentifier() or spec or conversion:
            raise DefinitionError(PATH, NOT_A_NAME.format(field=name))
        if name not in properties:
            raise DefinitionError(PATH, UNKNOWN_FIELD.format(field=name))
    return value
