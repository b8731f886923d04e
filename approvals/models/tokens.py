"""API tokens. Only the SHA-256 of a token's secret is stored; the secret is shown once,
when the token is issued (``services.tokens.token_issue``)."""

from __future__ import annotations

from django.db import models

from .directory import User


class ApiToken(models.Model):
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, default="")
    # SHA-256 hex of the secret: the one indexed lookup per API request.
    digest = models.CharField(max_length=64, unique=True)
    # The secret's first characters, to tell tokens apart in lists; not enough to use one.
    prefix = models.CharField(max_length=8)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Written at most once a minute per token, so a busy client costs no write per request.
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Scopes for integration accounts: None means whatever the user may.
    may_start = models.JSONField(
        null=True, blank=True, help_text="Workflow template keys this token may start."
    )
    may_signal = models.JSONField(
        null=True, blank=True, help_text="Signal names this token may send."
    )

    class Meta:
        indexes = [models.Index(fields=["user", "revoked_at"], name="apitoken_user_live")]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user_id})"
