"""Durations in workflow template definitions: seconds as numbers, or ISO 8601 strings."""

from __future__ import annotations

import datetime as dt

import isodate

from .errors import DefinitionError

# The longest a workflow template may wait or allow for anything: past it, adding the
# duration to a date leaves the calendar (a start would fail), and no approval waits
# that long on purpose.
MAX_DURATION_DAYS = 3650
MAX_DURATION_SECONDS = MAX_DURATION_DAYS * 86400.0
DURATION_TOO_LONG = f"is longer than ten years ({MAX_DURATION_DAYS} days), the longest allowed"


def parse_duration(value: object, path: str) -> float:
    """Return ``value`` as seconds; raise :class:`DefinitionError` naming ``path``.

    Accepts a non-negative number of seconds or an ISO 8601 duration such as
    ``"PT30S"`` or ``"P2D"``. Months and years are refused: their length in
    seconds depends on the calendar, and a deadline must mean one thing. Nothing
    longer than ten years is accepted.
    """
    if isinstance(value, bool):
        raise DefinitionError(path, "must be a number of seconds or an ISO 8601 duration")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            parsed = isodate.parse_duration(value)
        except OverflowError as exc:
            raise DefinitionError(path, DURATION_TOO_LONG) from exc
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
    if seconds > MAX_DURATION_SECONDS:
        raise DefinitionError(path, DURATION_TOO_LONG)
    return seconds
