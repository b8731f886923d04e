"""Decisions sent from a page and held by the server for their undo window.

A held decision is not an event: undone inside its window it leaves nothing in the
history. Once the window has passed, the poller (``services.held_decisions``) records
it through the one command path, with the request id it was sent with, and marks the
row in the same transaction, so it is recorded exactly once."""

from __future__ import annotations

from django.db import models

from .directory import Tenant, User
from .workflows import Workflow, shared_row

# Held rows still open: neither recorded, nor undone, nor refused at release.
OPEN_HELD = models.Q(recorded_at__isnull=True, undone_at__isnull=True, refused="")


class HeldDecision(models.Model):
    # tenant leads the index ``held_tenant_workflow`` below
    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    # (workflow, request_id) is indexed by the unique constraint ``held_request``
    workflow = models.ForeignKey(
        Workflow, on_delete=models.CASCADE, related_name="held_decisions", db_index=False
    )
    actor = models.ForeignKey(User, on_delete=models.CASCADE, related_name="held_decisions")
    step = models.CharField(max_length=64)
    decision = models.CharField(max_length=16)
    comment = models.TextField(blank=True, default="")
    on_behalf_of = models.CharField(max_length=150, blank=True, default="")
    request_id = models.CharField(max_length=128)
    held_at = models.DateTimeField()
    release_at = models.DateTimeField()
    recorded_at = models.DateTimeField(null=True, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    # Why the command path refused it when the window had passed (the workflow was
    # cancelled meanwhile, the person left): "" while it is held or once recorded.
    refused = models.TextField(blank=True, default="")
    # Releases that failed for another reason (the database went away); each pushes
    # the next try a little later.
    failures = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workflow", "request_id"], name="held_request"),
            # One decision held on a workflow at a time: another holder of the task sees
            # it being decided and cannot decide it twice.
            models.UniqueConstraint(
                fields=["workflow"],
                name="held_one_open",
                condition=OPEN_HELD,
            ),
        ]
        indexes = [
            models.Index(
                fields=["release_at"],
                name="held_due",
                condition=OPEN_HELD,
            ),
            models.Index(fields=["tenant", "workflow"], name="held_tenant_workflow"),
        ]
