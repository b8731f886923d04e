"""API tokens: ``POST /api/auth/token`` gives one; send ``Authorization: Bearer <token>``."""

from __future__ import annotations

from rest_framework.authentication import TokenAuthentication


class BearerTokenAuthentication(TokenAuthentication):
    keyword = "Bearer"
