"""``http_request``: call an HTTP endpoint from a workflow.

Step params: ``method`` (default POST), ``url``, ``body`` (``"data"`` sends the
workflow data; a list of field names sends just those; absent sends nothing),
``headers`` and ``keep`` (names of fields of the JSON answer to keep in the workflow's
history; absent keeps only the status). The step's idempotency key goes out as the
``Idempotency-Key`` header so the receiver can drop repeats. A 5xx answer or a time-out
fails the attempt and the retry policy tries again; a 4xx fails the step for good
(asking again will not help). The step's ``timeout`` bounds each call.

Only hosts on the organisation's list are called, and only at addresses that were
checked (``outbound``); redirects are followed by hand, each one checked again. A call
the list refuses fails the step for good, with the reason.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from ..models import Tenant
from .outbound import (
    HOST_NOT_ALLOWED,
    AllowedHost,
    OutboundRefused,
    address_refusal,
    allow_list,
    connection,
    url_host,
)
from .registry import ActivityContext, NonRetryableError, activity

DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
ALLOWED_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE"}
MAX_REDIRECTS = 5
# Bytes of an answer read at most; what is kept of it in the history, at most.
MAX_ANSWER_BYTES = 1_000_000
MAX_KEPT_CHARS = 4096
_REDIRECTS = {301, 302, 303, 307, 308}

TOO_MANY_REDIRECTS = "{url} redirected more than {limit} times."
REDIRECT_WITHOUT_LOCATION = "{host} answered a redirect without saying where to."
ANSWER_TOO_LARGE = (
    "The answer from {host} is larger than {limit} bytes; the step keeps fields only from"
    " smaller answers."
)
ANSWER_NOT_JSON = "The answer from {host} is not JSON, so the fields the step keeps cannot be read."
KEPT_TOO_LARGE = (
    "The fields kept from the answer of {host} take more than {limit} characters; keep fewer."
)
KEEP_INVALID = "params.keep must be a list of field names of the answer"
NO_ORGANISATION = "The step runs outside any organisation, so no host may be called."


class HttpServerError(Exception):
    """A 5xx answer: the server may recover, so the attempt is retried."""


class HttpTimeout(Exception):
    pass


class HttpClientError(NonRetryableError):
    """A 4xx answer: the request itself is wrong."""


class HttpRequestInvalid(NonRetryableError):
    """The step's params do not describe a request."""


class HttpAnswerUnusable(NonRetryableError):
    """The answer cannot give the fields the step keeps (too large, not JSON)."""


def _body(spec: object, data: Mapping[str, Any]) -> bytes | None:
    if spec is None:
        return None
    if spec == "data":
        return json.dumps(data).encode()
    if isinstance(spec, list) and all(isinstance(k, str) for k in spec):
        return json.dumps({k: data.get(k) for k in spec}).encode()
    raise HttpRequestInvalid("params.body must be 'data' or a list of field names")


@activity("http_request")
def http_request(
    key: str, data: dict[str, Any], *, params: dict[str, Any], context: ActivityContext
) -> dict[str, Any]:
    if context.tenant_id is None:
        raise OutboundRefused(NO_ORGANISATION)
    listed = Tenant.objects.filter(pk=context.tenant_id).values_list("outbound_hosts", flat=True)
    try:
        hosts = allow_list(listed.first())
    except ValueError as exc:
        raise OutboundRefused(str(exc)) from exc
    return http_call(key, data, params=params, hosts=hosts)


def http_call(
    key: str,
    data: Mapping[str, Any],
    *,
    params: Mapping[str, Any],
    hosts: Mapping[str, AllowedHost],
) -> dict[str, Any]:
    """Make the step's request to a host on ``hosts`` and return what the step keeps:
    ``{"status": ...}`` and, when it names fields in ``keep``, ``"body"`` with them."""
    url = params.get("url")
    method = str(params.get("method", "POST")).upper()
    if url_host(url) is None:
        raise HttpRequestInvalid("params.url must be an http(s) URL")
    assert isinstance(url, str)
    if method not in ALLOWED_METHODS:
        raise HttpRequestInvalid(f"params.method must be one of {sorted(ALLOWED_METHODS)}")
    keep = params.get("keep", [])
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        raise HttpRequestInvalid(KEEP_INVALID)
    timeout = min(float(params.get("timeout", DEFAULT_TIMEOUT)), MAX_TIMEOUT)
    body = _body(params.get("body"), data)
    headers = {str(name): str(value) for name, value in dict(params.get("headers") or {}).items()}
    headers["Idempotency-Key"] = key
    if body is not None:
        headers["Content-Type"] = "application/json"
    for _ in range(MAX_REDIRECTS + 1):
        status, location, raw, too_large = _exchange(url, method, body, headers, hosts, timeout)
        host = url_host(url) or url
        if status not in _REDIRECTS:
            break
        if not location:
            raise HttpServerError(REDIRECT_WITHOUT_LOCATION.format(host=host))
        following = urljoin(url, location)
        if url_host(following) != host:
            # the step's own headers (tokens) are for the host it names
            headers = {k: v for k, v in headers.items() if k in ("Idempotency-Key", "Content-Type")}
        if status == 303 or (status in (301, 302) and method == "POST"):
            method, body = "GET", None
            headers.pop("Content-Type", None)
        url = following
    else:
        raise OutboundRefused(TOO_MANY_REDIRECTS.format(url=params.get("url"), limit=MAX_REDIRECTS))
    if status >= 500:
        raise HttpServerError(f"{status} from {host}")
    if status >= 400:
        raise HttpClientError(f"{status} from {host}")
    result: dict[str, Any] = {"status": status}
    if keep:
        result["body"] = _kept(raw, too_large, keep, host)
    return result


def _exchange(
    url: str,
    method: str,
    body: bytes | None,
    headers: Mapping[str, str],
    hosts: Mapping[str, AllowedHost],
    timeout: float,
) -> tuple[int, str | None, bytes, bool]:
    """One request, no redirect followed: status, Location, the first bytes of the
    answer and whether there were more."""
    host = url_host(url) or url
    try:
        conn, path = connection(url, hosts, timeout)
        try:
            conn.request(method, path, body=body, headers=dict(headers))
            response = conn.getresponse()
            raw = response.read(MAX_ANSWER_BYTES + 1)
            return (
                response.status,
                response.getheader("Location"),
                raw[:MAX_ANSWER_BYTES],
                len(raw) > MAX_ANSWER_BYTES,
            )
        finally:
            conn.close()
    except OutboundRefused:
        raise
    except TimeoutError as exc:
        raise HttpTimeout(f"no answer from {host} within {timeout}s") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise HttpServerError(f"cannot reach {host}: {exc}") from exc


def _kept(raw: bytes, too_large: bool, keep: list[str], host: str) -> dict[str, Any]:
    if too_large:
        raise HttpAnswerUnusable(ANSWER_TOO_LARGE.format(host=host, limit=MAX_ANSWER_BYTES))
    try:
        parsed: Any = json.loads(raw) if raw else None
    except ValueError as exc:
        raise HttpAnswerUnusable(ANSWER_NOT_JSON.format(host=host)) from exc
    if not isinstance(parsed, Mapping):
        raise HttpAnswerUnusable(ANSWER_NOT_JSON.format(host=host))
    kept = {name: parsed[name] for name in keep if name in parsed}
    if len(json.dumps(kept)) > MAX_KEPT_CHARS:
        raise HttpAnswerUnusable(KEPT_TOO_LARGE.format(host=host, limit=MAX_KEPT_CHARS))
    return kept


def http_params_problems(
    params: Mapping[str, Any], hosts: Mapping[str, AllowedHost]
) -> list[tuple[str, str]]:
    """What stops an ``http_request`` step with ``params`` from being published in an
    organisation with ``hosts``, as (path under the params, problem): a URL that is not
    http(s), a host not on the list, an address the list does not allow, a bad ``keep``."""
    problems: list[tuple[str, str]] = []
    url = params.get("url")
    host = url_host(url)
    if host is None:
        problems.append(("url", "must be an http(s) URL"))
    elif host not in hosts:
        problems.append(("url", HOST_NOT_ALLOWED.format(host=host)))
    else:
        try:
            refusal = address_refusal(host, host, hosts[host])
        except ValueError:  # a name, not an address: checked when it is called
            refusal = None
        if refusal is not None:
            problems.append(("url", refusal))
    keep = params.get("keep", [])
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        problems.append(("keep", KEEP_INVALID))
    return problems
