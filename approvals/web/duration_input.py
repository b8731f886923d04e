"""Durations as the admin types them: a number and a unit (days, hours, minutes), never
ISO 8601 text. ``to_iso`` writes what the definition keeps; ``from_seconds`` shows a kept
duration back in the largest unit it fills exactly."""

from __future__ import annotations

import re

from templates_engine.durations import MAX_DURATION_DAYS

# seconds only for the short time limits of automated steps a definition may carry
UNITS = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}
DURATION_INVALID = "{what} must be a positive number of days, hours or minutes."
DURATION_UNIT_INVALID = "{what}: choose days, hours or minutes."
DURATION_TOO_LONG = f"{{what}} must be at most {MAX_DURATION_DAYS:,} days (ten years)."
_NUMBER = re.compile(r"\d{1,9}")


class DurationInputError(ValueError):
    """A duration typed wrong; the message names it and says what is allowed."""


def to_iso(number: object, unit: object, *, what: str = "The duration") -> str | None:
    """``("3", "days")`` -> ``"P3D"``; ``("", ...)`` -> None (no duration). Refuses zero,
    negatives, fractions, text and anything past ten years, in words."""
    text = str(number).strip() if number is not None else ""
    if text == "":
        return None
    if isinstance(number, bool) or not _NUMBER.fullmatch(text) or int(text) <= 0:
        raise DurationInputError(DURATION_INVALID.format(what=what))
    if unit not in UNITS:
        raise DurationInputError(DURATION_UNIT_INVALID.format(what=what))
    count = int(text)
    if count * UNITS[str(unit)] > MAX_DURATION_DAYS * 86400:
        raise DurationInputError(DURATION_TOO_LONG.format(what=what))
    if unit == "days":
        return f"P{count}D"
    return f"PT{count}{str(unit)[0].upper()}"


def from_seconds(seconds: float) -> tuple[int, str]:
    """``259200`` -> ``(3, "days")``; ``5400`` -> ``(90, "minutes")``: the largest unit
    that holds it exactly. A fraction of a second rounds up (never shown as zero)."""
    whole = max(-int(-seconds // 1), 1)
    for unit, size in UNITS.items():
        if whole % size == 0:
            return whole // size, unit
    return whole, "seconds"
