"""API authentication: ``Authorization: Bearer <secret>`` from ``POST /api/auth/token``
(or ``manage.py issue_token``). ``request.auth`` is the ``ApiToken``, whose scopes
(``may_start``, ``may_signal``) views may read."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from ..models import ApiToken, User
from ..services.tokens import TokenRefused, token_authenticate

MALFORMED_HEADER = "Send the token as 'Authorization: Bearer <token>'."


class BearerTokenAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None  # not ours: session authentication may still apply
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(MALFORMED_HEADER)
        known = getattr(request, "approvals_bearer", None)
        if known is not None:
            # Looked up by TenantScopeMiddleware from this same header for this request.
            return known
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed(MALFORMED_HEADER) from exc
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
