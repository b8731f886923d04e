"""The client's address, for sign-in limits (django-axes) and DRF throttles.

REMOTE_ADDR, unless ``APPROVALS_TRUSTED_PROXY_COUNT`` says how many reverse proxies of
ours stand in front of the app: then the address the outermost of them saw, the Nth
entry from the right of X-Forwarded-For (each proxy appends the address it received
from, so entries left of that are whatever the client chose to send). DRF's
``NUM_PROXIES`` is set from the same setting and reads the header the same way.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_ip(request: HttpRequest) -> str:
    remote = str(request.META.get("REMOTE_ADDR") or "")
    proxies = int(getattr(settings, "APPROVALS_TRUSTED_PROXY_COUNT", 0))
    if proxies <= 0:
        return remote
    forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [a for a in forwarded if a]
    if not forwarded:
        return remote
    return forwarded[-min(proxies, len(forwarded))]
