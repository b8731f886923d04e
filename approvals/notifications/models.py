"""The mail outbox, each person's choice of immediate mail or a daily digest, and the
record of one-click links already used."""

from __future__ import annotations

from django.db import models

from approvals.models import Tenant, User, Workflow
from approvals.models.workflows import shared_row


class MailKind(models.TextChoices):
    TASK_ASSIGNED = "task_assigned"
    REMINDER = "reminder"
    ESCALATED = "escalated"
    ESCALATED_AWAY = "escalated_away"
    SENT_BACK = "sent_back"
    OUTCOME_APPROVED = "outcome_approved"
    OUTCOME_REJECTED = "outcome_rejected"
    OUTCOME_CANCELLED = "outcome_cancelled"
    OUTCOME_FAILED = "outcome_failed"
    COMMENT = "comment"
    MENTIONED = "mentioned"
    WITHDRAWN = "withdrawn"
    # A decision held for its undo window that the command path refused when the
    # window had passed (services.held_decisions): no event, so ``event_seq`` 0.
    HELD_NOT_RECORDED = "held_not_recorded"


# Kinds that hand someone a task: their mails carry the Approve and Reject links.
TASK_KINDS = frozenset({MailKind.TASK_ASSIGNED, MailKind.REMINDER, MailKind.ESCALATED})


class MailStatus(models.TextChoices):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"


class MailMessage(models.Model):
    """One mail to one person about one event. The row is the truth: UNIQUE (workflow,
    event seq, recipient) makes a second projection of the same event a no-op, and
    ``status`` says whether it has left. ``digest`` rows wait for the daily digest.

    The command that writes the row stores its subject and the facts of the mail
    (``context``: names, amount, due time in the recipient's zone, signed links); the
    sender renders the bodies from them and keeps the bodies it sent."""

    # Not indexed: no read asks for an organisation's mails by the tenant alone, and
    # nothing deletes an organisation (notifications migration 0008).
    tenant = shared_row(Tenant, models.CASCADE, related_name="+", db_index=False)
    # (workflow, event_seq, recipient) is indexed by ``mail_event_recipient``
    workflow = models.ForeignKey(
        Workflow, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    event_seq = models.PositiveIntegerField()
    recipient = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32, choices=MailKind.choices)
    digest = models.BooleanField(default=False)
    to_address = models.EmailField()
    subject = models.CharField(max_length=300)
    context = models.JSONField(default=dict, blank=True)
    text_body = models.TextField(blank=True, default="")
    html_body = models.TextField(blank=True, default="")
    message_id = models.CharField(max_length=255)  # unique: ``mail_message_id`` below
    status = models.CharField(max_length=16, choices=MailStatus.choices, default="pending")
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    lease_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField()
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # a plain unique index: ``unique=True`` would add a second one for LIKE
            models.UniqueConstraint(fields=["message_id"], name="mail_message_id"),
            models.UniqueConstraint(
                fields=["workflow", "event_seq", "recipient"], name="mail_event_recipient"
            ),
        ]
        indexes = [
            # The sender's and the sweeper's scan: due rows still to send.
            models.Index(
                fields=["next_attempt_at"],
                name="mail_due",
                condition=models.Q(status="pending", digest=False),
            ),
            models.Index(
                fields=["recipient", "created_at"],
                name="mail_digest_due",
                condition=models.Q(status="pending", digest=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to_address} ({self.status})"


class NotificationMode(models.TextChoices):
    IMMEDIATE = "immediate"
    DIGEST = "digest"


DIGEST_HOUR_DEFAULT = 9  # 09:00 in the person's zone


class NotificationPreference(models.Model):
    """How a person wants to hear: each mail at once (the default, no row needed), or
    one daily digest of what waits for them, sent at ``digest_hour`` of their own day
    (their zone, else their organisation's, else UTC: ``digest.digest_due_at``)."""

    user = models.OneToOneField(
        User, on_delete=models.CASCADE, related_name="notification_preference"
    )
    mode = models.CharField(
        max_length=16, choices=NotificationMode.choices, default=NotificationMode.IMMEDIATE
    )
    digest_hour = models.PositiveSmallIntegerField(
        default=DIGEST_HOUR_DEFAULT, db_default=DIGEST_HOUR_DEFAULT
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(digest_hour__gte=0, digest_hour__lte=23),
                name="digest_hour_of_a_day",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.mode}"


class LinkUse(models.Model):
    """A one-click link that was confirmed. Written in the decision's transaction;
    UNIQUE ``link_id`` makes each link single-use."""

    link_id = models.CharField(max_length=64, unique=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    decision = models.CharField(max_length=16)
    used_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.link_id} {self.decision} by {self.user}"
