"""The error pages. A page that is missing, refused, malformed or broken gets a styled
page with the navigation and a way back to the inbox; anything under /api/ keeps the
API's JSON error envelope."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import defaults

from ..api.errors import FORBIDDEN, NOT_FOUND, json_error

# What a refusal says when the code that refused gave no sentence of its own.
FORBIDDEN_PAGE = (
    "This page is for people with another role; ask an admin of your organisation if you need it."
)
SERVER_ERROR = "Something went wrong on our side; it has been logged."
BAD_REQUEST = "The request could not be read."


def _api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return json_error(request, 404, "NOT_FOUND", NOT_FOUND)
    # The exception's text is for developers ("No Workflow matches the given query."):
    # the page says it in people's words.
    return render(request, "404.html", status=404)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return json_error(request, 403, "FORBIDDEN", FORBIDDEN)
    # Refusals raised by the app carry a sentence (access.FORBIDDEN_AUDITOR); the
    # admin's bare PermissionDenied carries none.
    reason = str(exception or "") or FORBIDDEN_PAGE
    return render(request, "403.html", {"reason": reason}, status=403)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _api(request):
        return json_error(request, 400, "BAD_REQUEST", BAD_REQUEST)
    # Rendered without the request (a bad Host header may be why we are here): a plain
    # template with the navigation written out.
    return defaults.bad_request(request, exception or Exception())


def server_error(request: HttpRequest) -> HttpResponse:
    if _api(request):
        return json_error(request, 500, "INTERNAL", SERVER_ERROR)
    # Plain template, no context processors and no database: whatever broke may be
    # either of them.
    return defaults.server_error(request)
