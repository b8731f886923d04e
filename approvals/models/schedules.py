"""Scheduled starts: a workflow template started on a cron schedule with fixed data
(a quarterly access review, a monthly vendor check), edited by the organisation's
finance admins in the admin. A schedule files its requests in the name of the person
who made it, never in anyone else's."""

from __future__ import annotations

from django.db import models

from .directory import Tenant, User
from .workflows import Workflow

SUBJECT_DUE = "{due}"


class StartSchedule(models.Model):
    """``next_due_at`` is the next period to start; the periodic job
    ``start-scheduled`` starts it with the Idempotency-Key ``schedule:<id>:<due>``, so
    a period is started once however many times it is fired."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="schedules")
    name = models.CharField(max_length=200)
    template_key = models.SlugField(
        "workflow template",
        max_length=64,
        help_text="The workflow template to start (its newest version).",
    )
    subject_type = models.CharField(max_length=64)
    subject_id = models.CharField(
        max_length=128,
        default=SUBJECT_DUE,
        help_text=(
            "The subject's id; {due} is replaced by the period's start in the schedule's "
            "time zone (2027-01-01T09:00), so each period has a subject of its own."
        ),
    )
    data = models.JSONField(default=dict, blank=True)
    submitter = models.ForeignKey(User, on_delete=models.PROTECT, related_name="+")
    # Who made the schedule (or changed it last): its requests are filed in their name
    # (services.schedules refuses to start one whose submitter is anyone else).
    owner = models.ForeignKey(
        User,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name="made by",
    )
    cron = models.CharField(
        max_length=120,
        help_text="minute hour day-of-month month day-of-week; 0 9 1 1,4,7,10 * is 09:00 "
        "on the first day of each quarter.",
    )
    timezone = models.CharField("time zone", max_length=64, default="Asia/Kolkata")
    enabled = models.BooleanField(default=True)
    next_due_at = models.DateTimeField(null=True, blank=True, editable=False)
    last_due_at = models.DateTimeField("last period started", null=True, blank=True, editable=False)
    last_workflow = models.ForeignKey(
        Workflow, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_error = models.TextField("last start refused", blank=True, editable=False)

    class Meta:
        indexes = [
            models.Index(
                fields=["next_due_at"], name="schedule_due", condition=models.Q(enabled=True)
            )
        ]

    def __str__(self) -> str:
        return self.name
