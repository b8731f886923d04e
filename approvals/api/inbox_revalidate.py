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
  refusals and its last-used stamp), or a session from the database engine, checked as
  ``django.contrib.auth.get_user`` checks it (live, the backend listed, the user active,
  the session's hash of the password matching under the current key; a hash that only a
  fallback key matches goes to the full path, which rotates it). Another
  ``Authorization`` scheme, a session from another engine, a missing or expired one:
  the view.
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

A session seen before is read in one statement with its user and their versions: its
row's data must still be the bytes decoded and checked last time (``_KNOWN``), else
they are decoded and checked again; the user's state (active, password) is read and
checked on every request.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import nullcontext
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.core.exceptions import DisallowedHost
from django.core.signals import setting_changed
from django.db import transaction
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.crypto import constant_time_compare
from django.utils.module_loading import import_string
from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings

from .. import access, clock
from ..models import Delegation, User
from ..runtime import store, tenant_scope
from ..selectors.tasks import BadCursor, task_list_for_user
from . import inbox_etag
from . import serializers as s
from .auth import MalformedBearer, bearer_token, bearer_user
from .rendering import compiled

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"
DB_SESSIONS = "django.contrib.sessions.backends.db"
JSON_ACCEPTS = frozenset(("", "*/*", "application/json"))
_SESSION_SQL = "SELECT session_data FROM django_session WHERE session_key = %s AND expire_date > %s"


@cache
def _path() -> str:
    return reverse("api-my-tasks")


@cache
def _user_sql() -> str:
    """The user and, in the same statement, their inbox versions (``now`` twice, then
    the user's id)."""
    versions = inbox_etag.versions_sql("u.id", "u.tenant_id")
    return (
        f"SELECT {store.columns(User, 'u')}, ({versions})"
        f" FROM {store.table(User)} u WHERE u.id = %s"
    )


@cache
def _session_store() -> type[SessionStore] | None:
    """The database engine's store, or None when sessions live elsewhere."""
    if settings.SESSION_ENGINE != DB_SESSIONS:
        return None
    store_class: type[SessionStore] = import_string(f"{DB_SESSIONS}.SessionStore")
    return store_class


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


# What a session's row said when it was last decoded and checked here: its key ->
# (session_data, the secret it was checked under, the user's id, the password hash
# the session holds). A session seen before is read in one statement with the user it
# named and the versions; its answer stands only when the row's data is still those
# very bytes (else they are decoded and checked again). Bounded: emptied when full.
_KNOWN: dict[str, tuple[str, str, Any, str]] = {}
KNOWN_SESSIONS = 10_000


@cache
def _known_sql() -> str:
    """The session's data, the user and their versions in one statement (the key and
    ``now``, ``at`` twice, then the user's id)."""
    return (
        f"SELECT ({_SESSION_SQL}), {store.columns(User, 'u')},"
        f" ({inbox_etag.versions_sql('u.id', 'u.tenant_id')})"
        f" FROM {store.table(User)} u WHERE u.id = %s"
    )


def _session_fields(store_class: type[SessionStore], key: str, data: str) -> tuple[Any, str] | None:
    """The user's id and the password hash that the session's ``data`` holds, checked as
    ``django.contrib.auth.get_user`` checks them (a model-backend sign-in); None: the
    view decides. Kept in ``_KNOWN`` for the next request on the same key."""
    secret = settings.SECRET_KEY
    known = _KNOWN.get(key)
    if known is not None and known[0] == data and known[1] == secret:
        return known[2], known[3]
    decoded: dict[str, Any] = store_class().decode(data)
    backend, user_id, given = (
        decoded.get(BACKEND_SESSION_KEY),
        decoded.get(SESSION_KEY),
        decoded.get(HASH_SESSION_KEY),
    )
    if backend != MODEL_BACKEND or backend not in settings.AUTHENTICATION_BACKENDS:
        return None
    if not given or not isinstance(given, str):
        return None
    try:
        pk = User._meta.pk.to_python(user_id)
    except Exception:  # noqa: BLE001 - the view's own path answers a bad session
        return None
    if len(_KNOWN) >= KNOWN_SESSIONS:
        _KNOWN.clear()
    _KNOWN[key] = (data, secret, pk, given)
    return pk, given


def _session_user(request: HttpRequest, now: dt.datetime) -> tuple[User, str] | None:
    """The session's user and their inbox versions at ``now``, checked as
    ``django.contrib.auth.get_user`` checks them; None: the view decides."""
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    store_class = _session_store()
    if not key or store_class is None:
        return None
    at = store.param(Delegation, "starts_at", now)
    known = _KNOWN.get(key)
    if known is not None:
        # One statement: the session's row, and the user it named when last seen.
        found = store.fetch(_known_sql(), [key, timezone.now(), at, at, known[2]], prepare=True)
        if not found or found[0][0] is None:
            _KNOWN.pop(key, None)
            return None
        fields = _session_fields(store_class, key, found[0][0])
        if fields is None or fields[0] != known[2]:
            return None  # the session now names someone else: the view decides
        row = found[0][1:]
    else:
        rows = store.fetch(_SESSION_SQL, [key, timezone.now()], prepare=True)
        if not rows:
            return None
        fields = _session_fields(store_class, key, rows[0][0])
        if fields is None:
            return None
        found = store.fetch(_user_sql(), [at, at, fields[0]], prepare=True)
        if not found:
            return None
        row = found[0]
    user: User = store.instance(User, row[:-1])
    if not user.is_active:
        return None
    if not constant_time_compare(fields[1], _auth_hash(user)):
        return None
    return user, str(row[-1])


_AUTH_HASHES: dict[tuple[str, str], str] = {}


def _auth_hash(user: User) -> str:
    """``user.get_session_auth_hash()`` (an HMAC of the password's hash under the secret
    key), kept per password hash and key."""
    kept = (user.password, settings.SECRET_KEY)
    found = _AUTH_HASHES.get(kept)
    if found is None:
        if len(_AUTH_HASHES) >= KNOWN_SESSIONS:
            _AUTH_HASHES.clear()
        found = _AUTH_HASHES[kept] = user.get_session_auth_hash()
    return found


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
