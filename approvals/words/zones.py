"""Time zones people are shown times in: their own setting (``User.time_zone``), else
what their browser said (the ``tz`` cookie the pages' script sets), else UTC. Mail has
no browser: it uses the setting, else the organisation's (``Tenant.time_zone``), else
UTC. Every time shown names its zone."""

from __future__ import annotations

import datetime as dt
import functools
import re
import zoneinfo
from typing import Any
from zoneinfo import ZoneInfo

from django.utils import timezone

from .. import clock

ZONE_INVALID = "Choose a time zone from the list."
_NAME = re.compile(r"^[A-Za-z0-9_+\-/]{1,64}$")


def zone_named(value: str | None) -> ZoneInfo | None:
    """The IANA zone ``value`` names (``Asia/Kolkata``); None when it names none."""
    if not value or not _NAME.fullmatch(value):
        return None
    try:
        return ZoneInfo(value)
    except (ValueError, KeyError, OSError, zoneinfo.ZoneInfoNotFoundError):
        return None


def zone_of(user: Any) -> ZoneInfo | None:
    """The zone ``user`` chose, or None when they left it to their browser."""
    return zone_named(getattr(user, "time_zone", "") or None)


@functools.cache
def zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone with a region (``Europe/London``), by name; the ones a person
    would pick, not ``Etc/GMT+5`` or legacy aliases."""
    names = sorted(
        z
        for z in zoneinfo.available_timezones()
        if "/" in z and not z.startswith(("Etc/", "SystemV/", "US/", "posix/", "right/"))
    )
    return [(z, z.replace("_", " ")) for z in names]


def this_year(zone: dt.tzinfo | None = None) -> int:
    """The current year in ``zone`` (the active zone when None)."""
    return timezone.localtime(clock.now(), zone).year


def day_month(day: dt.date, year: int | None = None) -> str:
    """``3 Mar`` in the current year (``year``: the reader's, else the active zone's),
    ``3 Mar 2025`` in any other: a date from another year always carries it. ``day`` is
    already in the reader's zone."""
    text = f"{day.day} {day:%b}"
    return text if day.year == (this_year() if year is None else year) else f"{text} {day.year}"


def moment(at: dt.datetime, zone: dt.tzinfo | None = None, *, with_date: bool = True) -> str:
    """``2 Dec, 14:15 IST`` in ``zone`` (the active zone when None), which is named;
    ``2 Dec 2025, 14:15 IST`` when not in the current year there."""
    local = timezone.localtime(at, zone)
    name = local.tzname() or ""
    text = f"{local:%H:%M}"
    if with_date:
        text = f"{day_month(local, this_year(zone))}, {text}"
    return f"{text} {name}".strip()


def moment_offset(at: dt.datetime, zone: dt.tzinfo | None = None) -> str:
    """``2 Dec 2026, 14:15 IST (UTC+05:30)`` in ``zone`` (the active zone when None):
    the admin's times, which auditors compare across zones."""
    local = timezone.localtime(at, zone)
    offset = local.strftime("%z") or "+0000"
    name = local.tzname() or ""
    text = f"{local.day} {local:%b %Y}, {local:%H:%M}"
    if name == "UTC":
        return f"{text} UTC"
    return f"{text} {name} (UTC{offset[:3]}:{offset[3:]})"
