"""The inbox API's reads answered before the rest of the stack: a ``GET /api/me/tasks``
with ``If-None-Match`` that still names the person's tag is a 304 after the sign-in's
lookup and the versions' (``inbox_etag``), and any other is the page of tasks the view
would send, read in the transaction ``TenantScopeMiddleware`` would open (acting for the
person's organisation), without the session, CSRF, message and time-zone middleware,
nor DRF's request wrapping, which cost more than the answer (bench/cpu_per_op.py: about
half of a full read's CPU).

It answers only what it can answer exactly as the view would, and leaves everything else
to the view, which decides as before:

- who asks: a bearer token through ``token_authenticate`` (the view's own lookup, its
  refusals and its last-used stamp), or a session through Django's own session engine
  and ``django.contrib.auth.get_user``, exactly as the authentication middleware would
  read it (a session that reading changes, such as a hash rotated to the current key,
  goes to the full stack, which saves it). Another ``Authorization`` scheme, a missing
  or expired session: the view.
- a member of an organisation (``access.is_member``, the view's ``TenantMember``);
- an answer in JSON: no ``?format=`` and an ``Accept`` the JSON renderer takes first;
- the tag computed as the view computes it (``inbox_etag.inbox_etag``): someone else's
  tag, or a tag from before any change, never matches;
- a query the view takes (``TaskListQuery``) and a cursor of ours: a refused one is
  the view's error answer.

The inbox API has no throttle and no access audit; the middleware before this one (the
request id, the security headers) still wrap the answer, it puts on it the policy the
CSP middleware after it would (built once), and it carries the headers the view's 304
and 200 carry (tests compare them, and the bodies).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import nullcontext
from functools import cache
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user
from django.core.exceptions import DisallowedHost
from django.core.signals import setting_changed
from django.db import transaction
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings

from .. import access, clock
from ..models import User
from ..runtime import tenant_scope
from ..selectors.tasks import BadCursor, task_list_for_user
from . import inbox_etag
from . import serializers as s
from .auth import MalformedBearer, bearer_token, bearer_user
from .rendering import compiled

JSON_ACCEPTS = frozenset(("", "*/*", "application/json"))


@cache
def _path() -> str:
    return reverse("api-my-tasks")


def _session_user(request: HttpRequest, now: dt.datetime) -> tuple[User, str] | None:
    """The session's user and their inbox versions at ``now``, by Django's own session
    engine and ``django.contrib.auth.get_user`` (which checks the backend, that the
    person may still sign in, and the session's hash of the password under the current
    and fallback keys); None: the view decides. A session ``get_user`` changed (a hash
    rotated to the current key, a session flushed) is left to the full stack, whose
    session middleware saves the change."""
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not key:
        return None
    request.session = _session_engine().SessionStore(key)
    user = get_user(request)
    if not user.is_authenticated or request.session.modified:
        return None
    assert isinstance(user, User)
    return user, inbox_etag.inbox_versions(user, now)


@cache
def _session_engine() -> Any:
    return import_module(settings.SESSION_ENGINE)


def _bearer_user(request: HttpRequest, header: str) -> User | None:
    """The token's person (``auth.bearer_user``, which leaves the token on the request
    for the tenant scope and the view, so it is looked up and stamped once however the
    request is answered); None for a header the view answers itself."""
    try:
        # Read by the API's authentication's own parser (a malformed header is the
        # view's 401, another scheme the view's too).
        secret = bearer_token(header)
    except MalformedBearer:
        return None
    return None if secret is None else bearer_user(request, secret)


def _who(request: HttpRequest, now: dt.datetime) -> tuple[User, str] | None:
    """Who asks, and the versions of their inbox at ``now``."""
    header = request.META.get("HTTP_AUTHORIZATION")
    if header is None:
        return _session_user(request, now)
    user = _bearer_user(request, header)
    if user is None or not access.is_member(user):
        return None
    return user, inbox_etag.inbox_versions(user, now)


def early_answer(request: HttpRequest) -> HttpResponseBase | None:
    """The 304 when this request's tag is still the person's, else the page of their
    tasks as the view answers it; None: the view's (a query it refuses, a cursor that
    is not ours, anyone it does not know here).

    When the view answers after all, what was looked up here goes with the request: a
    session's person to the auth middleware (``_cached_user``, which
    ``django.contrib.auth.middleware.get_user`` keeps), a token to the view's
    authentication (``approvals_bearer``), the versions to the view (``inbox_etag.KNOWN``)."""
    meta = request.META
    if (
        request.method != "GET"
        or request.path_info != _path()
        or meta.get("HTTP_ACCEPT", "") not in JSON_ACCEPTS
        or (meta.get("QUERY_STRING") and "format" in request.GET)
        or _renderer() is None
        or not _host_allowed(request)
    ):
        return None
    now = clock.now()
    who = _who(request, now)
    if who is None:
        return None
    user, versions = who
    if meta.get("HTTP_AUTHORIZATION") is None:
        request._cached_user = user  # type: ignore[attr-defined]
    setattr(request, inbox_etag.KNOWN, (user.pk, versions, now))
    if not access.is_member(user):
        return None
    etag = inbox_etag.etag_of(user, versions, now, query=meta.get("QUERY_STRING", ""), form="json")
    if inbox_etag.matches(meta.get("HTTP_IF_NONE_MATCH"), etag):
        response = inbox_etag.not_modified(etag)
        response["Content-Length"] = "0"
    else:
        page = _page(request, user)
        if page is None:
            return None
        response = HttpResponse(page, content_type=_renderer())
        inbox_etag.tagged(response, etag)
        response["Content-Length"] = str(len(page))
    response["Allow"] = ALLOW
    response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
    for header, policy in _csp_headers():
        response[header] = policy
    return response


def _host_allowed(request: HttpRequest) -> bool:
    """What the common middleware checks before any view: the Host is one of
    ALLOWED_HOSTS (else it refuses the request, 400), no user agent is refused and no
    redirect to www. is asked for. Anything else goes that way, to be refused there."""
    if settings.DISALLOWED_USER_AGENTS or settings.PREPEND_WWW:
        return False
    try:
        request.get_host()
    except DisallowedHost:
        return False
    return True


def _page(request: HttpRequest, user: User) -> bytes | None:
    """The page's JSON as the view renders it, read as the view reads it: in one
    transaction acting for the person's organisation (``TenantScopeMiddleware``)."""
    given = request.GET.dict()
    if given:
        query = s.TaskListQuery(data=given)
        if not query.is_valid():
            return None  # the view's error answer
        asked = query.validated_data
    else:
        asked = _first_page()
    tenant = tenant_scope.reads_act_for(user)
    try:
        with transaction.atomic(), tenant_scope.acting_for(tenant) if tenant else nullcontext():
            tasks = task_list_for_user(user=user, limit=asked["limit"], cursor=asked.get("cursor"))
    except BadCursor:
        return None
    rendered: bytes = JSONRenderer().render(compiled(s.TaskPageResponse)(tasks))
    return rendered


@cache
def _first_page() -> dict[str, Any]:
    """What ``TaskListQuery`` makes of no query at all (its defaults), validated once."""
    query = s.TaskListQuery(data={})
    if not query.is_valid():
        raise AssertionError(query.errors)
    return dict(query.validated_data)


@cache
def _renderer() -> str | None:
    """The JSON renderer's media type when it is the API's first (the one DRF picks for
    these ``Accept`` headers), else None: the view negotiates."""
    first = api_settings.DEFAULT_RENDERER_CLASSES[0]
    return JSONRenderer.media_type if first is JSONRenderer else None


# What DRF's view, the clickjacking and the common middleware put on the view's 304.
ALLOW = "GET, HEAD, OPTIONS"
CSP_MIDDLEWARE = "csp.middleware.CSPMiddleware"


@cache
def _csp_headers() -> tuple[tuple[str, str], ...]:
    """The Content-Security-Policy headers that ``CSPMiddleware`` puts on the view's
    304 (no nonce drawn, no policy of the view's own), built once: this middleware runs
    before it, and building them per answer cost a fifth of the 304."""
    if CSP_MIDDLEWARE not in settings.MIDDLEWARE:
        return ()
    from csp.constants import HEADER, HEADER_REPORT_ONLY
    from csp.utils import build_policy

    headers = []
    for header, name, report_only in (
        (HEADER, "CONTENT_SECURITY_POLICY", False),
        (HEADER_REPORT_ONLY, "CONTENT_SECURITY_POLICY_REPORT_ONLY", True),
    ):
        policy = build_policy(report_only=report_only)
        excluded = tuple((getattr(settings, name, None) or {}).get("EXCLUDE_URL_PREFIXES") or ())
        if policy and not _path().startswith(excluded):
            headers.append((header, policy))
    return tuple(headers)


@receiver(setting_changed)
def _settings_changed(*, setting: str, **kwargs: Any) -> None:
    if setting == "MIDDLEWARE" or setting.startswith("CONTENT_SECURITY_POLICY"):
        _csp_headers.cache_clear()
    if setting == "REST_FRAMEWORK":
        _renderer.cache_clear()
    if setting == "SESSION_ENGINE":
        _session_engine.cache_clear()


class InboxRevalidateMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        early = early_answer(request)
        if early is not None:
            return early
        response = self.get_response(request)
        if hasattr(request, "_cached_user") and getattr(request, inbox_etag.KNOWN, None):
            # The session was read here, not through ``request.session``: what the
            # session middleware adds to an answer whose session was read.
            patch_vary_headers(response, ("Cookie",))
        return response
