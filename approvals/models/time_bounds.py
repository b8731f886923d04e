"""The range of dates and times a person or a workflow template may give: 1 January 1970
to 31 December 2200. Outside it, a year-1 date east of Greenwich is a BC timestamp in
the database and year 9999 has no next day, and neither means anything to an approval.
Forms, the API and the models all ask here, so they refuse with the same sentence."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.exceptions import ValidationError

EARLIEST_DAY = dt.date(1970, 1, 1)
LATEST_DAY = dt.date(2200, 12, 31)
# Real time zones run from UTC-12:00 to UTC+14:00; an offset beyond is a typing error.
LARGEST_OFFSET = dt.timedelta(hours=14)
# The instants a day of the range begins or ends at in some time zone, with a day's
# margin either side: what the database's constraints hold stored times to.
EARLIEST_MOMENT = dt.datetime(1969, 12, 31, tzinfo=dt.UTC)
LATEST_MOMENT = dt.datetime(2201, 1, 2, tzinfo=dt.UTC)

DAY_OUT_OF_RANGE = "Enter a date between 1 January 1970 and 31 December 2200."
MOMENT_OUT_OF_RANGE = "Enter a date and time between 1 January 1970 and 31 December 2200."
OFFSET_OUT_OF_RANGE = "Enter a time with a UTC offset between -14:00 and +14:00."


def day_in_range(day: dt.date) -> bool:
    """Whether ``day`` (a date, or the date a datetime is written with) is in the range."""
    if isinstance(day, dt.datetime):
        day = day.date()
    return EARLIEST_DAY <= day <= LATEST_DAY


def moment_problem(moment: dt.datetime) -> str | None:
    """Why ``moment`` cannot be taken (a sentence), or None: its date as written must be
    in the range and its UTC offset no more than fourteen hours."""
    offset = moment.utcoffset()
    if offset is not None and abs(offset) > LARGEST_OFFSET:
        return OFFSET_OUT_OF_RANGE
    if not day_in_range(moment):
        return MOMENT_OUT_OF_RANGE
    return None


def stored_in_range(moment: Any) -> bool:
    """Whether a stored aware datetime lies where the database's constraints hold."""
    if not isinstance(moment, dt.datetime):
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return EARLIEST_MOMENT <= moment <= LATEST_MOMENT


def epoch_in_range(seconds: float) -> bool:
    """``stored_in_range`` for a time read as seconds since 1970 (UTC)."""
    return EARLIEST_MOMENT.timestamp() <= seconds <= LATEST_MOMENT.timestamp()


def validate_stored_moment(value: Any) -> None:
    """A model field's validator: an aware datetime outside the stored range is refused."""
    if isinstance(value, dt.datetime) and value.tzinfo is not None and not stored_in_range(value):
        raise ValidationError(MOMENT_OUT_OF_RANGE, code="out_of_range")
