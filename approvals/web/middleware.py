"""Times in the person's time zone: the pages' script stores the browser's zone in a
cookie; each request activates it (UTC, named, until the browser has said)."""

from __future__ import annotations

import re
from collections.abc import Callable
from zoneinfo import ZoneInfo

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

TZ_COOKIE = "tz"


def zone_from_cookie(value: str | None) -> ZoneInfo | None:
    """The browser's time zone from the cookie the pages' script sets; None if unknown."""
    if not value or len(value) > 64 or not re.match(r"^[A-Za-z0-9_+\-/]+$", value):
        return None
    try:
        return ZoneInfo(value)
    except (ValueError, KeyError, OSError):
        return None


class TimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        zone = zone_from_cookie(request.COOKIES.get(TZ_COOKIE))
        if zone is not None:
            timezone.activate(zone)
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
