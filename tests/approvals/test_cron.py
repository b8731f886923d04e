"""Cron expressions of start schedules: the next time due, in the schedule's time
zone, and every bad expression refused with its reason."""

from __future__ import annotations

import datetime as dt

import pytest

from approvals.services.cron import CRON_INVALID, Cron, CronInvalid

UTC = dt.UTC


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "zone", "after", "expected"),
    [
        pytest.param("0 9 1 1,4,7,10 *", "Asia/Kolkata", "2026-11-30T00:00", "2027-01-01T03:30",
                     id="quarterly-ist"),
        pytest.param("0 9 1 1,4,7,10 *", "Asia/Kolkata", "2027-01-01T03:30", "2027-04-01T03:30",
                     id="strictly-after"),
        pytest.param("*/15 * * * 1", "UTC", "2026-11-30T10:07", "2026-11-30T10:15",
                     id="monday-quarter-hours"),
        pytest.param("30 8 * * 0", "UTC", "2026-11-30T10:07", "2026-12-06T08:30", id="sunday"),
        pytest.param("0 0 29 2 *", "UTC", "2026-03-01T00:00", "2028-02-29T00:00", id="leap-day"),
        pytest.param("0 9 * * *", "Europe/London", "2026-07-01T00:00", "2026-07-01T08:00",
                     id="summer-time"),
    ],
)  # fmt: skip
def test_the_next_time_due(expression: str, zone: str, after: str, expected: str) -> None:
    assert Cron.parse(expression, zone).next_after(_at(after)) == _at(expected)


@pytest.mark.parametrize(
    ("expression", "zone", "problem"),
    [
        pytest.param("0 9 * *", "UTC", "got 4", id="four-fields"),
        pytest.param("", "UTC", "got 0", id="empty"),
        pytest.param("61 * * * *", "UTC", "61 > 59", id="minute-range"),
        pytest.param("0 9 31 2 *", "UTC", "never occurs", id="no-such-day"),
        pytest.param("0 nine * * *", "UTC", "Give five fields", id="not-a-number"),
        pytest.param("0 9 * * *", "Mars/Olympus", "No time zone named 'Mars/Olympus'", id="zone"),
    ],
)
def test_a_bad_schedule_is_refused_saying_why(expression: str, zone: str, problem: str) -> None:
    with pytest.raises(CronInvalid, match=problem):
        Cron.parse(expression, zone)


def test_the_message_names_the_fields_in_order() -> None:
    assert "minute hour day-of-month month day-of-week" in CRON_INVALID
