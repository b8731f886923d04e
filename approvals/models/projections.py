"""Read models and work queues projected from events: the inbox, timers and the
activity outbox. Each can be rebuilt from the history."""

from __future__ import annotations

from django.db import models

from .directory import Tenant, User
from .workflows import Workflow, shared_row


class PendingTask(models.Model):
    """One open task in someone's inbox."""

    # tenant and workflow lead the indexes below (task_inbox, task_unique)
    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    # No index of its own: the reads of a person's tasks name the tenant too and take
    # an inbox index (tenant, assignee, ...); a person's deletion reads the open tasks
    # alone (migration 0232).
    assignee = models.ForeignKey(
        User, on_delete=models.CASCADE, related_name="tasks", db_index=False
    )
    workflow = models.ForeignKey(
        Workflow, on_delete=models.CASCADE, related_name="tasks", db_index=False
    )
    step = models.CharField(max_length=64)
    on_behalf_of = models.CharField(max_length=150, blank=True)
    due_at = models.DateTimeField()
    created_at = models.DateTimeField()
    # The username of the person who left and whose task this was handed on from (a
    # TaskReassigned of reason handed_on), shown in the inbox; "" for any other task.
    handed_on_from = models.CharField(max_length=150, blank=True, default="", db_default="")
    # What the inbox page sorts and filters on, copied from the workflow when the row is
    # written (runtime.projections.task_facts; a rebuild derives the same), so a page of
    # a person's tasks is read from this table's indexes alone (migration 0032): the
    # kind, the amount in minor units (the first money field the data holds), the
    # requester's sort name (first name, else username, in lower case) and a lower-case
    # search text (summary, reference, the requester's names).
    template_key = models.CharField(max_length=64, blank=True, default="", db_default="")
    amount_minor = models.BigIntegerField(null=True, blank=True)
    requester_key = models.CharField(max_length=150, blank=True, default="", db_default="")
    search_text = models.TextField(blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "step", "assignee", "tenant"], name="task_unique"
            )
        ]
        indexes = [
            # The inbox query: WHERE tenant AND assignee ORDER BY due_at, id (keyset).
            models.Index(fields=["tenant", "assignee", "due_at", "id"], name="task_inbox"),
            # The inbox page's other sorts and its kind filter, each a walk of one index
            # (and ``task_inbox_amount``: (tenant, assignee, amount_minor DESC NULLS
            # LAST, due_at, id), from migration 0032, since a model's index takes no
            # NULLS LAST).
            models.Index(
                fields=["tenant", "assignee", "created_at", "id"], name="task_inbox_waiting"
            ),
            models.Index(
                fields=["tenant", "assignee", "requester_key", "due_at", "id"],
                name="task_inbox_requester",
            ),
            models.Index(
                fields=["tenant", "assignee", "template_key", "due_at", "id"],
                name="task_inbox_kind",
            ),
            # (Migration 0032's trigram GIN ``task_inbox_search`` for the inbox's text
            # search was dropped by 0037: a filter on the person's rows costs less.)
            # The command path's lookups of one workflow's tasks under the
            # organisation's policy: the workflow an index condition even when the
            # planner takes the organisation for empty (new since the last ANALYZE),
            # where it would otherwise walk all of the organisation's tasks in an inbox
            # index (migration 0044).
            models.Index(fields=["tenant", "workflow", "assignee"], name="task_workflow"),
        ]


class Timer(models.Model):
    """A durable wake-up. Fired once: the fire and its events commit together."""

    # No index leads with the tenant: the command path's statements name the workflow
    # (``timer_key``), and an organisation's timers still to fire are read in
    # ``timer_due`` (migration 0231).
    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    # (workflow, key) is indexed by the unique constraint ``timer_key``
    workflow = models.ForeignKey(
        Workflow, on_delete=models.CASCADE, related_name="timers", db_index=False
    )
    key = models.CharField(max_length=128)
    step = models.CharField(max_length=64)
    kind = models.CharField(max_length=32)
    fire_at = models.DateTimeField()
    claimed_until = models.DateTimeField(null=True, blank=True)
    fired_at = models.DateTimeField(null=True, blank=True)
    # A fire that keeps failing is retried on each claim until it has failed this many
    # times, then parked (dead_at) for a person to look at, not retried forever. Database
    # defaults: the command path inserts timers with plain SQL (runtime/store.py).
    failures = models.PositiveIntegerField(default=0, db_default=0)
    last_error = models.TextField(blank=True, db_default="")
    dead_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workflow", "key", "tenant"], name="timer_key")
        ]
        indexes = [
            models.Index(
                fields=["fire_at"], name="timer_due", condition=models.Q(fired_at__isnull=True)
            ),
            # (Migration 0044's ``timer_tenant_key`` (tenant, workflow, key) was dropped
            # by 0231: the columns of ``timer_key``, which the command path's lookups by
            # workflow and key take as well; with no index led by the tenant, none looks
            # free for an organisation new since the last ANALYZE.)
        ]


class ActivityAttempt(models.Model):
    """The activity outbox: one row per scheduled attempt. The row, not the broker
    message, is the truth; a lease that runs out counts as a timed-out attempt."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="attempts")
    step = models.CharField(max_length=64)
    undo = models.BooleanField(default=False)
    attempt = models.PositiveIntegerField()
    # Each entry into the step is a round (a send-back re-runs it): round 2's attempt 1
    # is another row, with its own idempotency key.
    round = models.PositiveIntegerField(default=1, db_default=1)
    activity = models.CharField(max_length=128)
    queue = models.CharField(max_length=64)
    idempotency_key = models.CharField(max_length=200)
    not_before = models.DateTimeField()
    timeout_seconds = models.FloatField()
    lease_until = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=32, blank=True)
    # Heartbeats: how long the attempt may go without one (None: the step sets no
    # heartbeat_timeout), when it gave the last, and the last details it gave (on a
    # new attempt: those the attempt before left, handed to the activity to resume).
    heartbeat_timeout_seconds = models.FloatField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    heartbeat_details = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "step", "undo", "round", "attempt"], name="attempt_unique"
            )
        ]
        indexes = [
            models.Index(
                fields=["not_before"],
                name="attempt_open",
                condition=models.Q(finished_at__isnull=True),
            ),
        ]


class WorkflowParticipant(models.Model):
    """Someone a workflow's history names as a person it concerns: its submitter, an
    assignee past or present, a decider, or the approver a delegate acted for. The
    read rule for people who are neither auditors nor organisation admins is "you are
    a participant" (approvals.access), answered by one indexed lookup."""

    # tenant and workflow lead the indexes below (participant_user, participant_unique)
    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    workflow = models.ForeignKey(
        Workflow, on_delete=models.CASCADE, related_name="participants", db_index=False
    )
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="participations")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "user", "tenant"], name="participant_unique"
            )
        ]
        indexes = [models.Index(fields=["tenant", "user", "workflow"], name="participant_user")]
