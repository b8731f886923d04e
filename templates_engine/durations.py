"""Durations in workflow template definitions: seconds as numbers, or ISO 8601 strings."""

from __future__ import annotations

import datetime as dt

import isodate

from .errors import DefinitionError


def parse_duration(value: object, path: str) -> float:
    """Return ``value`` as seconds; raise :class:`DefinitionError` naming ``path``.

    Accepts a non-negative number of seconds or an ISO 8601 duration such as
    ``"PT30S"`` or ``"P2D"``. Months and years are refused: their length in
    seconds depends on the calendar, and a deadline must mean one thing.
    """
    if isinstance(value, bool):
        raise DefinitionError(path, "must be a number of seconds or an ISO 8601 duration")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            parsed = isodate.parse_duration(value)
        except (isodate.ISO8601Error, ValueError) as exc:
            raise DefinitionError(path, f"{value!r} is not an ISO 8601 duration") from exc
        if not isinstance(parsed, dt.timedelta):
            raise DefinitionError(path, f"{value!r} uses months or years; use days instead")
        seconds = parsed.total_seconds()
    else:
        raise DefinitionError(path, "must be a number of seconds or an ISO 8601 duration")
    if seconds != seconds or seconds in (float("inf"), float("-inf")):
        raise DefinitionError(path, "must be finite")
    if seconds < 0:
        raise DefinitionError(path, "must not be negative")
    return seconds
