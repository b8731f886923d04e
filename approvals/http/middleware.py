"""Request correlation ids, and API-shaped answers to what happens before a view."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from ..api.auth import MalformedBearer, bearer_token, bearer_user
from ..api.errors import json_error
from ..runtime import tenant_scope
from .request_ids import request_id_valid

BODY_TOO_LARGE = "The request body is larger than {limit} bytes."
BAD_LENGTH = "Content-Length is not a number."
# The upload of a file to a request (POST /api/workflows/{id}/attachments), and a start
# with files (multipart POST /api/workflows).
_ATTACHMENTS = re.compile(r"^/api/workflows/[^/]+/attachments$")
_START = "/api/workflows"
FORM_OVERHEAD_BYTES = 64 * 1024


def _multipart(request: HttpRequest) -> bool:
    return str(request.META.get("CONTENT_TYPE", "")).startswith("multipart/form-data")


class RequestIdMiddleware:
    """Tags each request with a correlation id (``X-Request-Id`` if it is sane) and
    refuses an API body over the size limit before anything reads it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        given = request.META.get("HTTP_X_REQUEST_ID", "")  # no HttpHeaders built
        correlation_id = given if request_id_valid(given) else uuid.uuid4().hex
        request.correlation_id = correlation_id  # type: ignore[attr-defined]
        response = self._refuse(request) if request.path.startswith("/api/") else None
        if response is None:
            response = self.get_response(request)
        response["X-Request-Id"] = correlation_id
        return response

    def _refuse(self, request: HttpRequest) -> HttpResponse | None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and _ATTACHMENTS.match(request.path):
            # A file streams to disk; its own limit, and room for the form around it.
            limit = max(limit, settings.APPROVALS_FILE_MAX_BYTES + FORM_OVERHEAD_BYTES)
        elif limit is not None and request.path == _START and _multipart(request):
            files = settings.APPROVALS_FILE_MAX_BYTES * settings.APPROVALS_FILES_PER_UPLOAD
            limit = max(limit, files + limit + FORM_OVERHEAD_BYTES)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return json_error(request, 400, "BAD_REQUEST", BAD_LENGTH)
        if limit is not None and length > limit:
            return json_error(request, 413, "BODY_TOO_LARGE", BODY_TOO_LARGE.format(limit=limit))
        return None


class NoStoreMiddleware:
    """``Cache-Control: private, no-store`` on every API answer and on every page served
    to a signed-in user, so no shared cache or back button keeps someone's data."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.has_header("ETag") and "no-cache" in response.get("Cache-Control", ""):
            return response  # kept only to be revalidated every time (api/inbox_etag.py)
        user = getattr(request, "user", None)
        if request.path.startswith("/api/") or (user is not None and user.is_authenticated):
            patch_cache_control(response, private=True, no_store=True)
        return response


class ConnectionCheckMiddleware:
    """Checks a reused database connection (Django's ``CONN_HEALTH_CHECKS``, a ``SELECT 1``
    round trip) only when it has been idle, not before every request.

    The check spares the first request after a database restart an error. A connection
    that served a request less than APPROVALS_DB_CHECK_AFTER_IDLE_MS ago was
    working then, and a restart takes longer than that; under load that is every
    request, which saves each one a round trip. A request that met a broken connection
    still has it closed at its end (Django's ``close_old_connections``), so the next
    one opens a new connection."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        now = time.monotonic()
        idle = settings.APPROVALS_DB_CHECK_AFTER_IDLE_MS / 1000
        for db in _opened():
            used_at = getattr(db, "approvals_used_at", None)
            if db.connection is not None and used_at is not None and now - used_at < idle:
                db.health_check_done = True
        try:
            return self.get_response(request)
        finally:
            done = time.monotonic()
            for db in _opened():
                db.approvals_used_at = done if db.connection is not None else None


def _opened() -> list[Any]:
    """The database connections this thread has set up."""
    return list(connections.all(initialized_only=True))


_READS = frozenset({"GET", "HEAD"})
# Pages that find their tenant elsewhere: a signed mail link names its own task, and
# answers someone else's signed-in browser with "this link is not yours" (403), not 404.
_OWN_TENANT_PREFIXES = ("/mail/links/",)


class TenantScopeMiddleware:
    """A signed-in member's page or API read runs in one transaction that acts for their
    organisation (row-level security, approvals/runtime/tenant_scope.py): a query that
    forgets its tenant filter finds nothing of another's, and the page reads one
    snapshot. Writes (POST and the rest) run in the command path's own transactions,
    which act for the workflow's tenant; a superuser's requests cross tenants and stay
    on the login role, as do requests of no one signed in (a signed link's page finds
    its tenant from the link). After the session and the user are known, so neither is
    read under the policy."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        tenant_id = self._tenant_of(request)
        if tenant_id is None:
            return self.get_response(request)
        with transaction.atomic(), tenant_scope.acting_for(tenant_id):
            return self.get_response(request)

    @staticmethod
    def _tenant_of(request: HttpRequest) -> int | None:
        if request.method not in _READS or not tenant_scope.enabled():
            return None
        if request.path_info.startswith(_OWN_TENANT_PREFIXES):
            return None
        user = getattr(request, "user", None)
        try:
            secret = bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
        except MalformedBearer:
            return None  # the API answers it 401: the read acts for no one
        if secret is not None:
            # The API authenticates a bearer token before any session (and a refused
            # token is a 401, never the session's person): so does the scope. Looked
            # up on the login role (unless the inbox's early path did already).
            user = bearer_user(request, secret)
        return tenant_scope.reads_act_for(user)
