"""The chain seals: signed digests of every workflow's chain head, append-only."""

from __future__ import annotations

from django.db import models

from ..models.append_only import AppendOnly
from ..models.directory import Tenant


class ChainSeal(AppendOnly):
    """The chain heads of one organisation at ``sealed_at``, signed with a key the
    database does not hold (``APPROVALS_AUDIT_SEAL_KEY``). Append-only: a trigger
    refuses UPDATE and DELETE.

    A chained seal (``number`` set) is the organisation's ``number``-th: ``heads`` maps
    each workflow whose head moved since seal ``number - 1`` to ``[version,
    last_hash]``, ``count`` and ``digest`` (SHA-256 of the sorted
    ``workflow_id:version:last_hash`` lines) cover every workflow's head, and the
    signature covers all of that and ``prev_signature``, the signature of seal ``number
    - 1``. A seal from before the chain (``number`` null) holds every head in ``heads``
    and signs only ``count`` and ``digest``."""

    tenant = models.ForeignKey(Tenant, null=True, blank=True, on_delete=models.PROTECT)
    sealed_at = models.DateTimeField()
    count = models.PositiveIntegerField()
    digest = models.CharField(max_length=64)
    heads = models.JSONField()
    key_id = models.CharField(max_length=16)
    signature = models.CharField(max_length=64)
    number = models.PositiveIntegerField(null=True, blank=True)
    prev_signature = models.CharField(max_length=64, null=True, blank=True)

    class Meta:
        app_label = "approvals"
        indexes = [
            models.Index(fields=["tenant", "sealed_at"]),
            models.Index(fields=["tenant", "number"], name="chainseal_tenant_number"),
        ]
        ordering = ["sealed_at", "id"]

    append_only_name = "chain seals"

    def __str__(self) -> str:
        return f"seal #{self.pk} of {self.count} chains at {self.sealed_at:%Y-%m-%d %H:%M} UTC"


class DailySeal(AppendOnly):
    """One organisation's seal of one UTC day (approvals.audit.daily_seal): the Merkle
    root (RFC 6962 hashing, SHA-256) over the head ``(workflow id, seq, hash)`` every
    workflow of the organisation had at the day's end, sorted by workflow id; how many
    leaves; and the signature of the day before's seal, so the days chain. Signed with
    the seal key. One row per organisation per day, whatever the number of workflows.
    Append-only: a trigger refuses UPDATE and DELETE."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT)
    day = models.DateField()
    count = models.PositiveIntegerField()
    root = models.CharField(max_length=64)
    prev_signature = models.CharField(max_length=64, blank=True, default="")
    sealed_at = models.DateTimeField()
    key_id = models.CharField(max_length=16)
    signature = models.CharField(max_length=64)

    class Meta:
        app_label = "approvals"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "day"], name="dailyseal_tenant_day")
        ]
        ordering = ["tenant", "day"]

    append_only_name = "daily seals"

    def __str__(self) -> str:
        return f"daily seal of {self.day:%d %B %Y} over {self.count} workflow(s)"


class SealedHead(models.Model):
    """The head each workflow had at its organisation's last seal: what the next seal
    compares with, so it records only the heads that moved. Bookkeeping, not proof:
    ``verify_audit`` trusts the signed seals alone, and a row altered here makes the
    next seal disagree with the chain of seals before it."""

    workflow_id = models.UUIDField(primary_key=True)
    tenant = models.ForeignKey(
        Tenant, on_delete=models.PROTECT, db_constraint=False, db_index=False
    )
    version = models.PositiveIntegerField()
    last_hash = models.CharField(max_length=64)

    class Meta:
        app_label = "approvals"


class AuditOverride(AppendOnly):
    """An operator's decision to go ahead although ``verify_audit`` failed (today: a
    ``rebuild_read_models --despite-failed-verification``): who, when, why, what was
    found, signed with the seal key. Append-only: a trigger refuses UPDATE and DELETE."""

    tenant = models.ForeignKey(Tenant, null=True, blank=True, on_delete=models.PROTECT)
    at = models.DateTimeField()
    action = models.CharField(max_length=64)
    operator = models.CharField(max_length=150)
    reason = models.TextField()
    problems = models.JSONField()
    key_id = models.CharField(max_length=16)
    signature = models.CharField(max_length=64)

    class Meta:
        app_label = "approvals"
        ordering = ["at", "id"]

    append_only_name = "audit overrides"


class RetentionPolicy(models.Model):
    """How long an organisation keeps a workflow's history after it finishes, when not
    the deployment's ``APPROVALS_RETENTION_YEARS`` (seven years), and how long of that
    it stays in the live database (``live_months``; null: ``APPROVALS_LIVE_MONTHS``,
    twelve) before the archiver may move it out."""

    tenant = models.OneToOneField(Tenant, on_delete=models.PROTECT, related_name="retention")
    years = models.PositiveSmallIntegerField(default=7)
    live_months = models.PositiveSmallIntegerField(null=True, blank=True)
    set_by = models.CharField(max_length=150, blank=True, default="")
    set_at = models.DateTimeField()

    class Meta:
        app_label = "approvals"


class LegalHold(AppendOnly):
    """A legal hold put on (``action`` "hold") or taken off ("release") one workflow
    (``workflow_id``) or a whole organisation (``workflow_id`` null), by an auditor or an
    organisation admin, with a reason; signed with the seal key. Append-only: a trigger
    refuses UPDATE and DELETE, so the latest row of a workflow or organisation says
    whether it is held, and every earlier one stays."""

    HOLD = "hold"
    RELEASE = "release"

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT)
    workflow_id = models.UUIDField(null=True, blank=True)
    action = models.CharField(max_length=16)
    by = models.CharField(max_length=150)
    at = models.DateTimeField()
    reason = models.TextField()
    key_id = models.CharField(max_length=16)
    signature = models.CharField(max_length=64)

    class Meta:
        app_label = "approvals"
        indexes = [models.Index(fields=["tenant", "workflow_id", "at"], name="legalhold_target")]
        ordering = ["at", "id"]

    append_only_name = "legal holds"


class ArchivedMonth(models.Model):
    """One organisation's events of one month, written to the archive store
    (approvals.audit.archive): where, how many, and the manifest's signature.
    ``dropped_at`` is set once the month's partition is gone from the database: from
    then on the archive is that history, and ``verify_audit`` reads it there."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT)
    month = models.DateField()
    data_name = models.CharField(max_length=300)
    manifest_name = models.CharField(max_length=300)
    events = models.PositiveBigIntegerField()
    workflows = models.PositiveIntegerField()
    signature = models.CharField(max_length=64)
    written_at = models.DateTimeField()
    dropped_at = models.DateTimeField(null=True, blank=True)
    # The last event of the organisation's month (its last workflow's finish): where its
    # retention, and the archive objects' lock, are counted from.
    last_finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        app_label = "approvals"
        constraints = [
            models.UniqueConstraint(fields=["tenant", "month"], name="archivedmonth_tenant_month")
        ]


class ArchivedWorkflow(models.Model):
    """The live index of one archived workflow (approvals.audit.archived): what its
    pages, the API, the search and the export show of it, who may read it, and where its
    events are in the archive store (the month's events file and the byte range of its
    lines once unpacked; the manifest signs the file and the workflow's chain head).

    A workflow whose month's partition is dropped (``ArchivedMonth.dropped_at``) is read
    from the archive through this row. After retention, with no legal hold on it, its
    events are deleted and the row stays as a tombstone: ``deleted_at`` and
    ``deleted_reason`` set, the location cleared, the manifest's hash kept, so
    verification tells a history deleted by policy from one that is missing."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT)
    workflow_id = models.UUIDField()
    month = models.DateField()
    subject_type = models.CharField(max_length=64)
    subject_id = models.CharField(max_length=200)
    template_key = models.CharField(max_length=64)
    template_version = models.PositiveIntegerField()
    submitter_id = models.BigIntegerField(null=True, blank=True)
    submitter_name = models.CharField(max_length=300, blank=True, default="")
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=32)
    summary = models.TextField(blank=True, default="")
    amount_display = models.CharField(max_length=100, blank=True, default="")
    # Everyone who took part (approvals.access's read rule), by user id.
    participants = models.JSONField(default=list)
    # Who recorded a decision on it, by username (the search's "decided by").
    deciders = models.JSONField(default=list)
    # Where the events are: the events file, the manifest, and the byte range of the
    # workflow's lines in the unpacked file (the lines of other workflows between them
    # are skipped).
    data_name = models.CharField(max_length=300, blank=True, default="")
    manifest_name = models.CharField(max_length=300, blank=True, default="")
    offset = models.PositiveBigIntegerField(default=0)
    length = models.PositiveBigIntegerField(default=0)
    # Its first and last event's id: the audit API's pages follow the event id
    # (null on a row indexed before they were kept, until ``index_archived`` runs).
    first_event_id = models.BigIntegerField(null=True, blank=True)
    last_event_id = models.BigIntegerField(null=True, blank=True)
    events = models.PositiveIntegerField()
    head_seq = models.PositiveIntegerField()
    head_hash = models.CharField(max_length=64)
    manifest_sha256 = models.CharField(max_length=64)
    indexed_at = models.DateTimeField()
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_reason = models.TextField(blank=True, default="")

    class Meta:
        app_label = "approvals"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "workflow_id"], name="archivedworkflow_tenant_workflow"
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "month"], name="archivedworkflow_month"),
            models.Index(fields=["tenant", "subject_id"], name="archivedworkflow_subject"),
            models.Index(fields=["tenant", "started_at"], name="archivedworkflow_started"),
            models.Index(fields=["tenant", "first_event_id"], name="archivedworkflow_first_id"),
        ]
