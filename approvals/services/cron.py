"""Cron expressions for scheduled starts: ``minute hour day-of-month month
day-of-week`` (``0 9 1 1,4,7,10 *``: 09:00 on the first day of each quarter), read in
a time zone. Celery's ``crontab`` parses the fields (the syntax beat uses); this module
only finds the next time a schedule is due, which needs no beat."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from celery.schedules import ParseException, crontab

CRON_INVALID = "Give five fields: minute hour day-of-month month day-of-week ({problem})."
TIMEZONE_UNKNOWN = "No time zone named {name!r} (use a name such as Asia/Kolkata or UTC)."
# A schedule that matches no day in this many years (31 February) is refused.
_SEARCH_DAYS = 366 * 5
_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")


class CronInvalid(ValueError):
    """``field`` is the schedule's field at fault: ``cron`` or ``timezone``."""

    def __init__(self, message: str, field: str = "cron") -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Cron:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]  # 0 = Sunday, as in cron
    zone: ZoneInfo

    @classmethod
    def parse(cls, expression: str, timezone: str = "UTC") -> Cron:
        """Raises CronInvalid naming the problem."""
        fields = expression.split()
        if len(fields) != 5:
            raise CronInvalid(CRON_INVALID.format(problem=f"got {len(fields)}"))
        try:
            minute, hour, day_of_month, month, day_of_week = fields
            spec = crontab(
                minute=minute,
                hour=hour,
                day_of_month=day_of_month,
                month_of_year=month,
                day_of_week=day_of_week,
            )
        except (ValueError, TypeError, ParseException) as exc:  # ParseException: "-1"
            raise CronInvalid(CRON_INVALID.format(problem=str(exc) or "unreadable")) from exc
        try:
            zone = ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise CronInvalid(TIMEZONE_UNKNOWN.format(name=timezone), "timezone") from exc
        # crontab expands each field into the set of its values (celery-types does not
        # declare these attributes).
        values = {name: frozenset(getattr(spec, name)) for name in _FIELDS}
        cron = cls(
            tuple(sorted(values["minute"])),
            tuple(sorted(values["hour"])),
            values["day_of_month"],
            values["month_of_year"],
            values["day_of_week"],
            zone,
        )
        cron.next_after(dt.datetime(2000, 1, 1, tzinfo=dt.UTC))  # matches some day
        return cron

    def next_after(self, moment: dt.datetime) -> dt.datetime:
        """The first time after ``moment`` the schedule is due, in UTC."""
        local = moment.astimezone(self.zone)
        for offset in range(_SEARCH_DAYS):
            day = local.date() + dt.timedelta(days=offset)
            if not self._matches(day):
                continue
            for hour in self.hours:
                for minute in self.minutes:
                    at = dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=self.zone)
                    if at > local:
                        return at.astimezone(dt.UTC)
        raise CronInvalid(CRON_INVALID.format(problem="it matches no day"))

    def _matches(self, day: dt.date) -> bool:
        weekday = (day.weekday() + 1) % 7
        return (
            day.month in self.months
            and day.day in self.days_of_month
            and weekday in self.days_of_week
        )
