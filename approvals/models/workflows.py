"""Workflow templates, workflows and their append-only event history."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import models
from django_fsm import FSMField, transition
from uuid_utils.compat import uuid7

from templates_engine.status import STATUS_TRANSITIONS, STATUSES, TERMINAL, StatusTransition

from .append_only import AppendOnly
from .directory import Tenant, User


def shared_row(to: Any, on_delete: Any, **kwargs: Any) -> models.ForeignKey[Any, Any]:
    """A reference to a row that every command of a tenant shares: the tenant, the
    template version its workflows run. No database constraint: checking one takes a
    share lock on that one row in every command's transaction, each lock writes the
    row, and concurrent commands queue on it (two processes starting workflows ran no
    faster than one; bench/inprocess.py). Nothing deletes these rows (Django still
    applies ``on_delete``), and the command path writes ids it has just read."""
    return models.ForeignKey(to, on_delete=on_delete, db_constraint=False, **kwargs)


class WorkflowTemplate(models.Model):
    """One published version of a workflow template definition. Never edited: saving a
    change publishes the next version (see ``workflow_template_publish``)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="templates")
    key = models.SlugField(max_length=64)
    version = models.PositiveIntegerField()
    title = models.CharField(max_length=200)
    definition = models.JSONField()
    published_at = models.DateTimeField(auto_now_add=True)
    published_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL)
    # Set on the newest version when the workflow template is retired: no new starts.
    # Not part of the definition; publishing a next version opens it again.
    retired_at = models.DateTimeField(null=True, blank=True)
    retired_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who saved the draft this version was published from, when a second person
    # published it (four eyes on rules); None when its publisher saved it too.
    drafted_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key", "version"], name="template_version")
        ]
        ordering = ["tenant", "key", "-version"]
        # A workflow template's roles (django-guardian object permissions, granted to
        # groups and people on its first version so that publishing keeps them; the
        # rules are access.py's). Not Django's model-wide change and view: those are
        # about every row of the model, and a model-wide grant would read as a role.
        permissions = [
            ("start_workflowtemplate", "May start workflows of this workflow template"),
            ("edit_workflowtemplate", "May edit this workflow template"),
            ("view_workflowtemplate_runs", "May see every workflow of this workflow template"),
        ]

    def __str__(self) -> str:
        return f"{self.key} v{self.version}"


class WorkflowTemplateDraft(models.Model):
    """A change to a workflow template saved for review: a second finance admin reads
    it in words and publishes it (``workflow_template_draft_publish``), or it is
    discarded. Never edited: saving again saves another draft."""

    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="+")
    key = models.SlugField(max_length=64)
    definition = models.JSONField()
    # The version the change was made to (None: a new workflow template).
    based_on = models.ForeignKey(
        WorkflowTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    drafted_by = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    drafted_at = models.DateTimeField(auto_now_add=True)
    published = models.ForeignKey(
        WorkflowTemplate, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    closed_by = models.ForeignKey(
        User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tenant", "key", "-drafted_at"]
        indexes = [models.Index(fields=["tenant", "key", "closed_at"], name="template_draft_open")]

    def __str__(self) -> str:
        return f"{self.key} draft {self.pk}"


# The engine's statuses, one source: the labels ("Rolled Back") come from the names.
# (django-stubs types only the one-string form of the functional API.)
WorkflowStatus = models.TextChoices(  # type: ignore[call-overload]
    "WorkflowStatus", [(status, status) for status in STATUSES]
)


S = WorkflowStatus

# A workflow holds its subject from its start until it reaches one of these.
ACTIVE_STATUSES = tuple(status for status in STATUSES if status not in TERMINAL)


class StatusTransitions:
    """The status machine's moves (``templates_engine.status.STATUS_TRANSITIONS``) as
    django-fsm transitions on ``status``, one method per move, named by it (``begin``,
    ``complete``, ``cancel``...): the command path calls the one each recorded event
    names, so a move the table does not hold fails loudly here too. No method leaves a
    terminal status."""


def _fsm_transition(move: StatusTransition) -> Any:
    def apply(self: Workflow) -> None:
        """Move the status (templates_engine.status)."""

    apply.__name__ = apply.__qualname__ = move.name
    return transition(field="status", source=list(move.sources), target=move.target)(apply)


for _move in STATUS_TRANSITIONS:
    setattr(StatusTransitions, _move.name, _fsm_transition(_move))
del _move


class Workflow(StatusTransitions, models.Model):
    """A running or finished workflow. ``version`` is the number of events so far;
    ``snapshot`` is the engine state after them, derived and rebuildable."""

    # Time-ordered (UUID version 7: the first 48 bits are the start's millisecond): a new
    # workflow's rows land at the right-hand end of every index keyed by its id (events,
    # tasks, participants, timers, visits, mails), on pages already in memory and already
    # in the write-ahead log since the last checkpoint, where a random id touched a random
    # page of each (bench/wal_per_command.py). The id tells its holder when the workflow
    # was started, which every page showing the workflow says anyway.
    id = models.UUIDField(primary_key=True, default=uuid7, editable=False)
    # No index of their own where a composite index below starts with the column: every
    # index is written on every insert, and the command path inserts on every command.
    tenant = shared_row(Tenant, models.PROTECT, related_name="workflows", db_index=False)
    # Not indexed: no read asks for a template version's workflows, and nothing deletes
    # a template version (migration 0233).
    template = shared_row(WorkflowTemplate, models.PROTECT, db_index=False)
    template_key = models.SlugField(max_length=64, db_index=False)
    template_version = models.PositiveIntegerField()
    subject_type = models.CharField(max_length=64)
    subject_id = models.CharField(max_length=128)
    data = models.JSONField(default=dict)
    submitter = models.ForeignKey(
        User, null=True, on_delete=models.PROTECT, related_name="submitted_workflows"
    )
    status = FSMField(default=S.NEW, choices=S.choices, protected=True)
    public_status = models.CharField(max_length=80, default=S.NEW)
    current_step = models.CharField(max_length=64, blank=True)
    version = models.PositiveIntegerField(default=0)
    snapshot = models.JSONField(default=dict)
    # Started under a start policy that allows one running workflow per subject: the
    # partial unique index ``workflow_subject_running`` holds it to one.
    subject_exclusive = models.BooleanField(default=False, db_default=False)
    last_hash = models.CharField(max_length=64, blank=True)
    # The request in one line and its amount, as people read them (words/data.py): the
    # command path projects them when the data is set, so the inbox's list reads two
    # short columns instead of each workflow's data and workflow template.
    summary = models.TextField(blank=True, default="")
    amount_display = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "status", "-created_at"]),
            models.Index(fields=["tenant", "template_key", "-created_at"]),
            # A subject's workflows of one template, oldest first: the start policy's
            # lookup reads one entry of it, however many workflows the tenant has.
            models.Index(
                fields=["tenant", "subject_type", "subject_id", "template_key", "created_at"],
                name="workflow_subject",
            ),
            models.Index(fields=["tenant", "submitter", "-created_at"]),
            # The search's newest (or oldest) first: a common word's first page is the
            # newest rows that have it, found walking this instead of sorting them all.
            models.Index(fields=["tenant", "-created_at"], name="workflow_newest"),
            # A workflow by its id under its organisation's policy (every command's lock):
            # the id an index condition even when the planner takes the organisation for
            # empty (new since the last ANALYZE), where the primary key lost to an index
            # above that walked all of its workflows (migration 0044).
            models.Index(fields=["tenant", "id"], name="workflow_tenant_id"),
            # On PostgreSQL, migration 0040 adds the column ``search_words`` (generated
            # from the reference, the summary and every string of the data) and its GIN
            # index ``workflow_search_words``, for the search's words
            # (approvals.selectors.search_text); the database fills both itself.
        ]
        constraints = [
            # The database's answer to two starts racing for one subject: the second
            # insert waits for the first transaction and then fails. A workflow leaves
            # the index when it finishes.
            models.UniqueConstraint(
                fields=["tenant", "template_key", "subject_type", "subject_id"],
                condition=models.Q(subject_exclusive=True, status__in=ACTIVE_STATUSES),
                name="workflow_subject_running",
            )
        ]

    def __str__(self) -> str:
        return f"{self.template_key} {self.subject_type}:{self.subject_id} ({self.public_status})"


def history_month(started: dt.datetime) -> dt.date:
    """The partition a workflow's events live in: the UTC month it started."""
    started = started.astimezone(dt.UTC)
    return dt.date(started.year, started.month, 1)


class WorkflowEvent(AppendOnly):
    """One event of a workflow's history. Append-only: on PostgreSQL a trigger refuses
    UPDATE and DELETE. ``hash`` chains each event to the one before it."""

    tenant = shared_row(Tenant, models.PROTECT)
    # (workflow, seq) is indexed by the unique constraint ``event_seq``
    workflow = models.ForeignKey(
        Workflow, on_delete=models.PROTECT, related_name="events", db_index=False
    )
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=64)
    schema_version = models.PositiveSmallIntegerField(default=1)
    payload = models.JSONField()
    # Set on the first event of a command that carried a request id, with the result
    # the command returned, so a repeat can return it again.
    request_id = models.CharField(max_length=128, null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    # Indexed by the partial indexes ``event_actor`` and ``event_on_behalf_of`` below.
    actor = models.ForeignKey(
        User, null=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    role = models.CharField(max_length=32)
    on_behalf_of = models.ForeignKey(
        User, null=True, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    created_at = models.DateTimeField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)
    # Which of ``runtime.chain``'s formats ``hash`` was computed under; NULL is format 1
    # (events written before there was a choice), so adding the column rewrote no row.
    hash_format = models.SmallIntegerField(null=True, blank=True)
    # What a reader sees that the payload does not say, as it was when the event was
    # written (``runtime.chain.recorded_fields``): the actor's names, the status after
    # the event, the template and the subject. Hashed by format 3; NULL before it.
    recorded = models.JSONField(null=True, blank=True)
    # The first day of the UTC month the workflow started in: the partition key on
    # PostgreSQL (migration 0029), so a workflow's whole history is in one partition.
    # Not hashed: it follows from the workflow, which the chain already names.
    history_month = models.DateField()

    class Meta:
        # With the partition key, as PostgreSQL requires of a partitioned table's unique
        # constraints, and the tenant, for distribution by tenant (migration 0120); the
        # same uniqueness, since the month and the tenant follow from the workflow.
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "seq", "history_month", "tenant"], name="event_seq"
            ),
            # Only the events that carry a request id (the first of a command that had
            # one) are in it: NULLs never collide, so the uniqueness is the same, and
            # the lookup ``request_id = ...`` implies the predicate (migration 0230).
            models.UniqueConstraint(
                fields=["workflow", "request_id", "history_month", "tenant"],
                condition=models.Q(request_id__isnull=False),
                name="event_request_id",
            ),
        ]
        # An organisation's comments, newest first: a person's open questions
        # (selectors/questions.py) walk them, not every event (migration 0220).
        indexes = [
            models.Index(
                models.F("tenant"),
                models.F("created_at").desc(),
                condition=models.Q(type="CommentAdded"),
                name="event_comments",
            ),
            # A person's events, for the check that a person deleted acted in none
            # (``on_delete=PROTECT``, and the foreign key's own check): only the events
            # that name one. Most events are nobody's on behalf of anyone, and the
            # timers' and the system's have no actor, so each writes fewer entries; a
            # lookup ``actor_id = ...`` implies ``actor_id IS NOT NULL`` and takes the
            # index as the full one was taken (migration 0230).
            models.Index(
                fields=["actor"], name="event_actor", condition=models.Q(actor__isnull=False)
            ),
            models.Index(
                fields=["on_behalf_of"],
                name="event_on_behalf_of",
                condition=models.Q(on_behalf_of__isnull=False),
            ),
        ]
        ordering = ["workflow", "seq"]

    append_only_name = "workflow events"


class StartRequest(models.Model):
    """An ``Idempotency-Key`` of a start: a repeat returns the first response."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE)
    user = models.ForeignKey(User, on_delete=models.CASCADE)
    key = models.CharField(max_length=255)
    body_hash = models.CharField(max_length=64)
    workflow = models.ForeignKey(Workflow, null=True, on_delete=models.CASCADE)
    response = models.JSONField(null=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user", "key"], name="start_idempotency")
        ]
