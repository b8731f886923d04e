"""API authentication: ``Authorization: Bearer <secret>`` from ``POST /api/auth/token``
(or ``manage.py issue_token``). ``request.auth`` is the ``ApiToken``, whose scopes
(``may_start``, ``may_signal``) views may read."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from ..models import ApiToken, User
from ..services.tokens import TokenRefused, token_authenticate

MALFORMED_HEADER = "Send the token as 'Authorization: Bearer <token>'."
KEYWORD = "Bearer"
# The request's attribute where a token found before the view waits for it: (user, token).
FOUND = "approvals_bearer"


class MalformedBearer(Exception):
    """An ``Authorization`` header of the Bearer scheme that is not the keyword and
    exactly one ASCII token."""


def bearer_token(header: str | bytes) -> str | None:
    """The token an ``Authorization`` header's value carries: ``"Bearer <token>"``
    (the keyword in any case, spaces around either) gives the token; no header, or
    another scheme (Basic, ...), gives None; the Bearer keyword alone, with more than one
    word after it, or with a token that is not ASCII raises MalformedBearer.

    The one reading of the header: the API's authentication answers a malformed one
    401, the tenant scope (approvals.http.middleware) leaves such a read acting for no one.
    A ``str`` is the header as Django's META holds it (its bytes as Latin-1)."""
    raw = header
    if isinstance(header, str):
        try:
            raw = header.encode("iso-8859-1")
        except UnicodeEncodeError:
            raw = header.encode()  # not from a real request; its non-ASCII is refused
    assert isinstance(raw, bytes)
    parts = raw.split()
    if not parts or parts[0].lower() != KEYWORD.lower().encode():
        return None
    if len(parts) != 2:
        raise MalformedBearer(MALFORMED_HEADER)
    try:
        return parts[1].decode("ascii")
    except UnicodeDecodeError as exc:
        raise MalformedBearer(MALFORMED_HEADER) from exc


def bearer_user(request: HttpRequest, secret: str) -> User | None:
    """The person the bearer token ``secret`` (read from this request's header by
    ``bearer_token``) names, or None when the token is refused: the view's
    authentication answers that 401 with the reason. Looked up once per request, by
    the first middleware to ask (the inbox's early path, then the tenant scope, which
    need the person before the view): the token is left on the request for the next
    one and for BearerTokenAuthentication."""
    known = getattr(request, FOUND, None)
    if known is not None:
        return known[0]
    try:
        token = token_authenticate(secret=secret)
    except TokenRefused:
        return None
    setattr(request, FOUND, (token.user, token))
    return token.user


class BearerTokenAuthentication(BaseAuthentication):
    keyword = KEYWORD

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        try:
            # META's own value: DRF's get_authorization_header fails on a character
            # past Latin-1 (a test client's header) instead of refusing it.
            secret = bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
        except MalformedBearer as exc:
            raise exceptions.AuthenticationFailed(MALFORMED_HEADER) from exc
        if secret is None:
            return None  # not ours: session authentication may still apply
        known = getattr(request, FOUND, None)
        if known is not None:
            return known  # looked up by a middleware (bearer_user) from this header
        try:
            token = token_authenticate(secret=secret)
        except TokenRefused as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from exc
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        return self.keyword


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """Documents the scheme in the OpenAPI schema (picked up when this module loads)."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": __doc__ or ""}
