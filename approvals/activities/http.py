"""``http_request``: call an HTTP endpoint from a workflow.

Step params: ``method`` (default POST), ``url``, ``body`` (``"data"`` sends the
workflow data; a list of field names sends just those; absent sends nothing) and
``headers``. The step's idempotency key goes out as the ``Idempotency-Key`` header so
the receiver can drop repeats. A 5xx answer or a time-out fails the attempt and the
retry policy tries again; a 4xx fails the step for good (asking again will not help).
The step's ``timeout`` bounds the call.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from .registry import NonRetryableError, activity

DEFAULT_TIMEOUT = 30.0
ALLOWED_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


class HttpServerError(Exception):
    """A 5xx answer: the server may recover, so the attempt is retried."""


class HttpTimeout(Exception):
    pass


class HttpClientError(NonRetryableError):
    """A 4xx answer: the request itself is wrong."""


class HttpRequestInvalid(NonRetryableError):
    """The step's params do not describe a request."""


def _body(spec: object, data: Mapping[str, Any]) -> bytes | None:
    if spec is None:
        return None
    if spec == "data":
        return json.dumps(data).encode()
    if isinstance(spec, list) and all(isinstance(k, str) for k in spec):
        return json.dumps({k: data.get(k) for k in spec}).encode()
    raise HttpRequestInvalid("params.body must be 'data' or a list of field names")


@activity("http_request")
def http_request(key: str, data: dict[str, Any], *, params: dict[str, Any]) -> dict[str, Any]:
    url = params.get("url")
    method = str(params.get("method", "POST")).upper()
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise HttpRequestInvalid("params.url must be an http(s) URL")
    if method not in ALLOWED_METHODS:
        raise HttpRequestInvalid(f"params.method must be one of {sorted(ALLOWED_METHODS)}")
    timeout = float(params.get("timeout", DEFAULT_TIMEOUT))
    body = _body(params.get("body"), data)
    request = urllib.request.Request(url, data=body, method=method)
    for name, value in dict(params.get("headers") or {}).items():
        request.add_header(str(name), str(value))
    request.add_header("Idempotency-Key", key)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read(1_000_000)
            status = response.status
    except urllib.error.HTTPError as exc:
        detail = exc.read(500).decode(errors="replace")
        if exc.code >= 500:
            raise HttpServerError(f"{exc.code} from {url}: {detail}") from exc
        raise HttpClientError(f"{exc.code} from {url}: {detail}") from exc
    except TimeoutError as exc:
        raise HttpTimeout(f"no answer from {url} within {timeout}s") from exc
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError | socket.timeout):
            raise HttpTimeout(f"no answer from {url} within {timeout}s") from exc
        raise HttpServerError(f"cannot reach {url}: {exc.reason}") from exc
    try:
        parsed: Any = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")[:2000]
    return {"status": status, "body": parsed}
