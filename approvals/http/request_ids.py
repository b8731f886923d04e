"""The request ids people and systems send (one per rendered button, e-mailed link or
webhook delivery), and the correlation ids the middleware accepts in ``X-Request-Id``:
one pattern for both. Ids the app makes for itself start with "#", outside this set."""

from __future__ import annotations

import re

REQUEST_ID_PATTERN = r"^[A-Za-z0-9._:\-]{1,128}$"
_REQUEST_ID = re.compile(REQUEST_ID_PATTERN)


def request_id_valid(value: str) -> bool:
    return _REQUEST_ID.fullmatch(value) is not None  # "$" alone takes a trailing newline
