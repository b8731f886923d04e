"""The chain seals: signed digests of every workflow's chain head, append-only."""

from __future__ import annotations

from typing import Any

from django.db import models

from ..models.directory import Tenant


class ChainSeal(models.Model):
    """Every chain head of one organisation (or of the whole deployment when ``tenant``
    is null) at ``sealed_at``: ``heads`` maps a workflow id to ``[version, last_hash]``,
    ``digest`` is the SHA-256 of the sorted ``workflow_id:version:last_hash`` lines and
    ``signature`` an HMAC-SHA256 over the digest with a key the database does not hold
    (``APPROVALS_AUDIT_SEAL_KEY``). Append-only: a trigger refuses UPDATE and DELETE."""

    tenant = models.ForeignKey(Tenant, null=True, blank=True, on_delete=models.PROTECT)
    sealed_at = models.DateTimeField()
    count = models.PositiveIntegerField()
    digest = models.CharField(max_length=64)
    heads = models.JSONField()
    key_id = models.CharField(max_length=16)
    signature = models.CharField(max_length=64)

    class Meta:
        app_label = "approvals"
        indexes = [models.Index(fields=["tenant", "sealed_at"])]
        ordering = ["sealed_at", "id"]

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ValueError("chain seals are append-only")
        super().save(*args, **kwargs)

    def __str__(self) -> str:
        return f"seal #{self.pk} of {self.count} chains at {self.sealed_at:%Y-%m-%d %H:%M} UTC"
