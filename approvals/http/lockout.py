"""The answer to a sign-in attempt refused by django-axes (too many failures from this
account or this address): the API's error envelope under /api/, the sign-in page with
a message elsewhere. Both are 429 with Retry-After."""

from __future__ import annotations

from typing import Any

from axes.helpers import get_cool_off
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from ..api.errors import json_error

TOO_MANY_ATTEMPTS = (
    "Too many failed sign-in attempts for this account or from this address; "
    "try again in {minutes} minutes."
)


def _retry_after_seconds(request: HttpRequest) -> int:
    cool_off = get_cool_off(request)
    return int(cool_off.total_seconds()) if cool_off else 3600


def lockout_message(seconds: int) -> str:
    return TOO_MANY_ATTEMPTS.format(minutes=max(1, (seconds + 59) // 60))


def lockout_response(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    seconds = _retry_after_seconds(request)
    message = lockout_message(seconds)
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = json_error(request, 429, "TOO_MANY_ATTEMPTS", message)
    else:
        username = (credentials or {}).get("username") or request.POST.get("username", "")
        response = TemplateResponse(
            request,
            "registration/login.html",
            {
                "form": AuthenticationForm(request, initial={"username": username}),
                "locked_out": True,
                "lockout_message": message,
                "next": request.POST.get("next") or request.GET.get("next", ""),
            },
            status=429,
        )
        response.render()
    response["Retry-After"] = str(seconds)
    return response
