"""Requests saved before they are submitted: not routed, seen by their author alone."""

from __future__ import annotations

import uuid

from django.db import models

from .directory import Tenant, User
from .workflows import Workflow


def new_idempotency_key() -> str:
    """The key the draft's submission starts its workflow with, chosen when the draft
    is made, so that submitting it twice starts one workflow."""
    return f"draft-{uuid.uuid4().hex}"


class Draft(models.Model):
    """A request its author is still writing. Nothing is routed and no event is
    recorded until it is submitted; then ``workflow`` names what it started, and the
    draft is kept (read-only) so that a repeated submission answers as the first."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="drafts")
    author = models.ForeignKey(User, on_delete=models.CASCADE, related_name="drafts")
    template_key = models.SlugField(max_length=64)
    subject_type = models.CharField(max_length=64, blank=True)
    subject_id = models.CharField(max_length=128, blank=True)
    data = models.JSONField(default=dict)
    idempotency_key = models.CharField(max_length=255, default=new_idempotency_key)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    workflow = models.ForeignKey(
        Workflow, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "author", "-updated_at"])]

    def __str__(self) -> str:
        return f"draft {self.template_key} {self.subject_id or self.pk}"


class DraftFile(models.Model):
    """A file attached to a draft while it is written. Its bytes are kept apart from
    the requests' files (``selectors.drafts.draft_file_name``), so that deleting the
    draft removes them without asking what else uses the same bytes; submitting the
    draft records each on the new request (stored once under its hash, as any file)
    and drops the draft's own copy."""

    draft = models.ForeignKey(Draft, on_delete=models.CASCADE, related_name="files")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    sha256 = models.CharField(max_length=64)
    name = models.CharField(max_length=255)
    size = models.BigIntegerField()
    content_type = models.CharField(max_length=64)
    added_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["draft", "sha256"], name="draft_file_once"),
        ]

    def __str__(self) -> str:
        return f"{self.name} on {self.draft_id}"
