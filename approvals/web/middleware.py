"""Times in the person's time zone: their own setting when they chose one, else the
browser's (the pages' script stores it in a cookie), else UTC, named (approvals.words.zones)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from ..words.zones import zone_named, zone_of

TZ_COOKIE = "tz"


class TimeZoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        chosen = zone_of(user) if user is not None and user.is_authenticated else None
        zone = chosen or zone_named(request.COOKIES.get(TZ_COOKIE))
        if zone is not None:
            timezone.activate(zone)
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
