"""The analytics read model: one row per visit of a workflow to a step (each entry
into an approval, wait or signal step, and each time a request went back to its
submitter for changes), projected from the events in the command's transaction and
rebuilt from them by ``rebuild_read_models``."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from .directory import Tenant
from .workflows import Workflow, shared_row


class StepVisit(models.Model):
    """A workflow's ``entry``-th entry into a step: when it came and left, how it left
    (``outcome``), whether its deadline was set and whether it was escalated, and the
    values of the workflow template's enum fields when it came (the filters)."""

    # A name the command path can compute (``runtime.analytics.visit_id``), so closing
    # a visit is an UPDATE by primary key that travels with the command's other writes.
    id = models.UUIDField(primary_key=True)
    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    workflow = models.ForeignKey(
        Workflow, on_delete=models.CASCADE, related_name="visits", db_index=False
    )
    template_key = models.SlugField(max_length=64, db_index=False)
    entry = models.PositiveIntegerField()
    step = models.CharField(max_length=64)
    # approval | changes (back with the submitter) | wait | signal
    kind = models.CharField(max_length=16)
    entered_at = models.DateTimeField()
    left_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    # completed | rejected | sent_back | cancelled | ended; "" while open
    outcome = models.CharField(max_length=16, blank=True, default="")
    escalated = models.BooleanField(default=False)
    dims = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "workflow", "entry"], name="visit_unique")
        ]
        indexes = [
            # The page: one organisation's visits of a period, of one workflow template.
            models.Index(fields=["tenant", "template_key", "entered_at"], name="visit_period"),
            models.Index(fields=["tenant", "entered_at"], name="visit_tenant_period"),
            # The longest-waiting open requests.
            models.Index(
                fields=["tenant", "entered_at"],
                name="visit_open",
                condition=models.Q(left_at__isnull=True),
            ),
            # A visit closed by its id under the organisation's policy, as
            # ``workflow_tenant_id`` (migration 0044).
            models.Index(fields=["tenant", "id"], name="visit_tenant_id"),
        ]


class StepDay(models.Model):
    """The rollup the analytics page reads (``runtime.rollup``): per organisation,
    workflow template, step, kind, UTC day the visit was entered and values of the enum
    fields (``dims``): the visits, those still open, how the others ended, and two
    histograms: ``waits``, the closed visits per log-scale bucket of the time waited, and
    ``firsts``, the requests' first visits per half-hour of the day (the weekly volume
    in any zone a whole number of half-hours from UTC). Kept by statement-level
    triggers on the step visits (PostgreSQL), so it moves with the statement that
    writes them."""

    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    template_key = models.SlugField(max_length=64, db_index=False)
    step = models.CharField(max_length=64)
    kind = models.CharField(max_length=16)
    day = models.DateField()
    dims = models.JSONField(default=dict, blank=True)
    visits = models.IntegerField(default=0)
    waiting = models.IntegerField(default=0)  # still open
    completed = models.IntegerField(default=0)
    rejected = models.IntegerField(default=0)
    sent_back = models.IntegerField(default=0)
    breached = models.IntegerField(default=0)  # closed after their deadline
    escalated = models.IntegerField(default=0)
    waits = ArrayField(models.IntegerField())
    firsts = ArrayField(models.IntegerField())

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "template_key", "step", "kind", "day", "dims"],
                name="stepday_key",
            )
        ]
        indexes = [models.Index(fields=["tenant", "day"], name="stepday_tenant_day")]
