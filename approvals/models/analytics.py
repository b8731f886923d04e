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
    # In the rollup (``StepDay``) as it reads now. A visit is written uncounted (the
    # column's default), and the periodic fold (``runtime.rollup.rollup_fold``) adds it
    # and sets this; a change to a counted visit puts it back uncounted and keeps what
    # was counted as a ``StepVisitRetraction`` (approvals/sql/triggers/analytics_rollup.sql).
    counted = models.BooleanField(default=False, db_default=False)

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
            # The visits the fold has still to count, by the period the page adds them for.
            models.Index(
                fields=["tenant", "entered_at"],
                name="visit_uncounted",
                condition=models.Q(counted=False),
            ),
        ]


class StepVisitRetraction(models.Model):
    """A counted visit as the rollup counted it, before a change or deletion: the
    periodic fold takes it off the rollup and deletes this row. Written by the
    visits' row triggers (approvals/sql/triggers/analytics_rollup.sql), never by the app."""

    tenant = shared_row(Tenant, models.CASCADE, db_index=False)
    template_key = models.SlugField(max_length=64, db_index=False)
    entry = models.PositiveIntegerField()
    step = models.CharField(max_length=64)
    kind = models.CharField(max_length=16)
    entered_at = models.DateTimeField()
    left_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, blank=True, default="")
    escalated = models.BooleanField(default=False)
    dims = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "entered_at"], name="retraction_period")]


class StepDay(models.Model):
    """The rollup the analytics page reads (``runtime.rollup``): per organisation,
    workflow template, step, kind, UTC day the visit was entered and values of the enum
    fields (``dims``): the visits, those still open, how the others ended, and two
    histograms: ``waits``, the closed visits per log-scale bucket of the time waited, and
    ``firsts``, the requests' first visits per half-hour of the day (the weekly volume
    in any zone a whole number of half-hours from UTC). Kept by a periodic fold of the
    visits not yet counted and the retractions of changed ones
    (``runtime.rollup.rollup_fold``); the page adds what is still pending when it reads."""

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
