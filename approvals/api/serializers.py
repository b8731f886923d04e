"""Request and response shapes. Validation only: no business logic here."""

from __future__ import annotations

import copy
import re
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from templates_engine.commands import DECISIONS
from templates_engine.comments import COMMENT_MAX
from templates_engine.steps.approval import HANDOVER_NOTE_MAX

from ..http.request_ids import REQUEST_ID_PATTERN
from ..models import time_bounds
from ..selectors.tasks import CURSOR_PATTERN
from ..selectors.workflows import workflow_restart_links
from .schema import JSON_OBJECT_SCHEMA, NO_NUL


class _WholeMatch:
    """The whole value must match ``pattern``. A RegexField's own validator searches,
    and a pattern ending in ``$`` (as OpenAPI writes it) also matches before a trailing
    newline; this one refuses that newline too."""

    def __init__(self, pattern: str) -> None:
        self.regex = re.compile(pattern)

    def __call__(self, value: Any) -> None:
        if isinstance(value, str) and self.regex.fullmatch(value) is None:
            raise serializers.ValidationError("This value does not match the required pattern.")


class RequestBody(serializers.Serializer):
    """A request's shape. Each instance binds shallow copies of the declared fields
    where DRF deep-copies them (re-running every field's ``__init__``: some 7% of an
    HTTP decision's CPU under the profiler). A declared field is never bound or used
    itself, and what the copies share (validators, choices, messages) is only read
    while validating; a nested body is a copy too, and builds its own fields in turn."""

    def get_fields(self) -> dict[str, Any]:
        fields = {}
        for name, declared in self._declared_fields.items():
            field = copy.copy(declared)
            field.__dict__.pop("fields", None)  # a nested body's bound fields, if any
            fields[name] = field
        return fields


class Text(serializers.RegexField):
    """Text from a client: a JSON string (a number is not coerced), at most
    ``max_length`` characters (the column's), matching ``pattern`` (by default: no NUL,
    which PostgreSQL refuses), kept as sent. The schema says all of it and nothing is
    trimmed, so a value the schema allows is a value the server accepts."""

    def __init__(self, *, max_length: int, pattern: str = NO_NUL, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        if not kwargs.get("allow_blank"):
            kwargs.setdefault("min_length", 1)
        super().__init__(pattern, max_length=max_length, **kwargs)
        self.validators.append(_WholeMatch(pattern))

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class Moment(serializers.DateTimeField):
    """A date and time from a client within ``time_bounds``: its date as written from
    1970 to 2200 and its UTC offset at most fourteen hours (no zone has more; past it
    the database refuses, or a conversion overflows), refused in those words."""

    def enforce_timezone(self, value: Any) -> Any:
        # Asked of the value as parsed, before it is turned into the server's zone (its
        # offset as sent is gone after).
        problem = time_bounds.moment_problem(value)
        if problem is not None:
            raise serializers.ValidationError(problem, code="out_of_range")
        return super().enforce_timezone(value)


@extend_schema_field(JSON_OBJECT_SCHEMA)
class JsonObjectField(serializers.JSONField):
    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        return value


class RequestIdField(serializers.RegexField):
    """A client-chosen id, one per rendered button or e-mailed link: a string only."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)  # kept as sent, as Text is
        super().__init__(REQUEST_ID_PATTERN, max_length=128, **kwargs)
        self.validators.append(_WholeMatch(REQUEST_ID_PATTERN))

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            raise serializers.ValidationError("Must be a string.")
        return super().to_internal_value(data)


class TokenRequest(RequestBody):
    username = Text(max_length=150)
    password = Text(max_length=256)


class TokenResponse(serializers.Serializer):
    token = serializers.CharField(help_text="Shown once; send as Authorization: Bearer <token>.")
    expiresAt = serializers.DateTimeField()


class Subject(RequestBody):
    type = Text(pattern=r"^[A-Za-z0-9_.\-]+$", max_length=64)
    id = Text(max_length=128)


class StartRequestBody(RequestBody):
    template = Text(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    subject = Subject()
    data = JsonObjectField(default=dict)  # type: ignore[assignment]


class StartResponse(serializers.Serializer):
    """A start's answer (a ``services.workflows.StartResult``)."""

    workflowId = serializers.UUIDField(source="workflow_id")
    templateVersion = serializers.IntegerField(source="template_version")
    status = serializers.CharField()
    version = serializers.IntegerField()
    existing = serializers.BooleanField(
        help_text="True when the start policy use_existing answered with a running workflow."
    )


class TemplateListed(serializers.Serializer):
    """A workflow template the caller may start (its newest version)."""

    key = serializers.CharField()
    title = serializers.CharField()
    version = serializers.IntegerField()
    mayStart = serializers.BooleanField(source="may_start")
    maySeeRuns = serializers.BooleanField(
        source="may_see_runs",
        help_text="True when the caller reads every workflow of it (GET /api/workflows).",
    )


class TemplateListResponse(serializers.Serializer):
    templates = TemplateListed(many=True)


class DecisionRequest(RequestBody):
    decision = serializers.ChoiceField(choices=DECISIONS)
    requestId = RequestIdField()
    comment = Text(max_length=4000, allow_blank=True, default="")
    onBehalfOf = Text(max_length=150, required=False)
    delegateTo = Text(max_length=150, required=False)
    data = JsonObjectField(required=False, help_text="Changed data, when resubmitting.")  # type: ignore[assignment]
    hold = serializers.BooleanField(
        default=False,
        help_text=(
            "Hold the decision for the undo window (APPROVALS_UNDO_SECONDS, 8 seconds) "
            "before it is recorded, as the pages do: 202 with the held decision, which "
            "DELETE /api/workflows/{id}/held/{requestId} undoes inside the window. "
            "Approve, reject and send back only, without data or delegateTo. Without it "
            "(the default) the decision is recorded at once."
        ),
    )


class HeldDecisionResponse(serializers.Serializer):
    """A decision held for its undo window (``services.held_decisions``)."""

    requestId = serializers.CharField()
    decision = serializers.CharField()
    state = serializers.ChoiceField(
        choices=("held", "recorded", "undone", "refused"),
        help_text=(
            "held: waiting for its window to pass; recorded: in the history, once; "
            "undone: nothing was recorded; refused: the workflow took it no longer "
            "when the window had passed (see reason)."
        ),
    )
    releaseAt = serializers.DateTimeField(help_text="When the window ends.")
    reason = serializers.CharField(help_text="Why it was refused; empty otherwise.")


class DecisionResponse(serializers.Serializer):
    """A command's answer (a ``runtime.commands.CommandResult``)."""

    status = serializers.CharField()
    version = serializers.IntegerField()
    duplicate = serializers.BooleanField()


class DecidedResponse(DecisionResponse):
    """A decision's answer: the command's, and what the decision did in words."""

    message = serializers.CharField(
        default="",
        help_text=(
            "What the decision did, in the words the app's buttons use: "
            "'Sent Expense claim R-8 back to Alice.', "
            "'Rejected Expense claim R-8; the request ends.'"
        ),
    )


class SignalRequest(RequestBody):
    requestId = RequestIdField()
    payload = JsonObjectField(default=dict)


class CancelRequest(RequestBody):
    requestId = RequestIdField()
    reason = Text(max_length=1000, allow_blank=True, default="")


class CommentRequest(RequestBody):
    requestId = RequestIdField()
    text = Text(
        max_length=COMMENT_MAX,
        help_text=(
            "1 to 2,000 characters, not all blank. Each @name mentions that person, who "
            "is told by mail and must be able to read the request."
        ),
    )


class ReassignRequest(RequestBody):
    requestId = RequestIdField()
    fromUser = serializers.CharField(max_length=150)
    toUser = serializers.CharField(max_length=150)
    comment = serializers.CharField(max_length=4000, allow_blank=True, default="")


class AddApproverRequest(RequestBody):
    requestId = RequestIdField()
    person = Text(max_length=150, help_text="The user name of the person to add.")
    step = Text(
        max_length=64,
        help_text="The id of the approval step the request waits in (the person joins it).",
    )
    reason = Text(
        max_length=HANDOVER_NOTE_MAX,
        help_text="Why, kept in the request's history with your name; not all blank.",
    )


class DeactivateRequest(RequestBody):
    reason = serializers.CharField(max_length=500, allow_blank=True, default="")


class HandoverResponse(serializers.Serializer):
    workflowId = serializers.UUIDField(source="workflow_id")
    step = serializers.CharField()
    toUser = serializers.CharField(source="to_user")


class DeactivateResponse(serializers.Serializer):
    username = serializers.CharField()
    handedOn = HandoverResponse(source="moved", many=True)


class Timestamp(serializers.DateTimeField):
    """An answer's time as Python writes ISO 8601 (``+00:00``), as the API always sent."""

    def to_representation(self, value: Any) -> Any:
        return value.isoformat()


class OptionalText(serializers.CharField):
    """Text that the model stores blank and the answer sends as null."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, **kwargs)

    def to_representation(self, value: Any) -> Any:
        return str(value) if value else None


class SubjectOf(serializers.Serializer):
    """A workflow's subject, read from the workflow."""

    type = serializers.CharField(source="subject_type")
    id = serializers.CharField(source="subject_id")


class TaskItem(serializers.Serializer):
    """One open task (a ``PendingTask`` with its workflow)."""

    taskId = serializers.IntegerField(source="pk")
    workflowId = serializers.UUIDField(source="workflow_id")
    step = serializers.CharField()
    stepName = serializers.CharField(
        source="step_name", help_text="The step's title in the workflow template."
    )
    template = serializers.CharField(source="workflow.template_key")
    subject = serializers.CharField(
        help_text="The request in one line, as the specification names it: the workflow "
        "template's title, the subject's reference and the amount (Expense exp_88213, "
        "₹45,000).",
    )
    subjectRef = SubjectOf(
        source="workflow", help_text="The subject's type and reference, for programs."
    )
    summary = serializers.CharField(
        source="workflow.summary",
        help_text="The request in one line: the workflow template's summary line filled "
        "from the data, else its title and the subject's reference.",
    )
    amount = OptionalText(
        source="workflow.amount_display",
        help_text="The request's amount as people read it (₹45,000.00); null when the "
        "request has none.",
    )
    status = serializers.CharField(source="workflow.public_status")
    onBehalfOf = OptionalText(source="on_behalf_of")
    dueAt = Timestamp(
        source="due_at",
        help_text="When the step falls due, in the organisation's offset "
        "(2026-12-04T17:30:00+05:30); UTC when it has chosen no zone.",
    )
    assignedAt = Timestamp(source="created_at")


class TaskPageResponse(serializers.Serializer):
    """A page of the inbox (a ``selectors.tasks.TaskPage``)."""

    items = TaskItem(many=True, source="tasks")
    nextCursor = serializers.CharField(source="next_cursor", allow_null=True)


class TaskListQuery(RequestBody):
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    cursor = Text(pattern=CURSOR_PATTERN, required=False, max_length=512)


class HistoryItem(serializers.Serializer):
    """One event of the history (a ``selectors.workflows.HistoryEntry``)."""

    seq = serializers.IntegerField()
    type = serializers.CharField()
    actor = serializers.CharField(allow_null=True)
    role = serializers.CharField()
    onBehalfOf = serializers.CharField(source="on_behalf_of", allow_null=True)
    at = Timestamp()
    comment = serializers.CharField(allow_blank=True)
    payload = serializers.DictField()


class Assignee(serializers.Serializer):
    user = serializers.CharField()
    onBehalfOf = serializers.CharField(allow_null=True)


class WorkflowSummary(serializers.Serializer):
    """A workflow, as search lists it (a ``Workflow``)."""

    workflowId = serializers.UUIDField(source="pk")
    status = serializers.CharField(source="public_status")
    template = serializers.CharField(source="template_key")
    templateVersion = serializers.IntegerField(source="template_version")
    subject = SubjectOf(source="*")
    submitter = serializers.CharField(source="submitter.username", allow_null=True)
    currentStep = OptionalText(source="current_step")
    createdAt = Timestamp(source="created_at")


class OpenAssignmentOut(serializers.Serializer):
    """One person an open step waits for (a ``selectors.workflows.OpenAssignment``)."""

    user = serializers.CharField()
    onBehalfOf = serializers.CharField(source="on_behalf_of", allow_null=True)
    dueAt = Timestamp(source="due_at")
    since = Timestamp()


class OpenStepOut(serializers.Serializer):
    """An approval step waiting for decisions (a ``selectors.workflows.OpenStep``)."""

    step = serializers.CharField()
    assignees = OpenAssignmentOut(many=True)


class TimerOut(serializers.Serializer):
    """The next durable wake-up (a ``Timer``): a deadline, a reminder, a wait, a signal's
    time-out or an activity's heartbeat deadline."""

    kind = serializers.CharField()
    step = serializers.CharField()
    fireAt = Timestamp(source="fire_at")


class NullableTimestamp(Timestamp):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_null=True, **kwargs)

    def to_representation(self, value: Any) -> Any:
        return None if value is None else super().to_representation(value)


class AttemptOut(serializers.Serializer):
    """One attempt of the running activity's round (a ``selectors.workflows.AttemptView``):
    ``outcome`` is ``ok``, the error's name or ``abandoned``, null while it runs."""

    attempt = serializers.IntegerField()
    notBefore = Timestamp(source="not_before")
    startedAt = NullableTimestamp(source="started_at")
    leaseUntil = NullableTimestamp(source="lease_until")
    finishedAt = NullableTimestamp(source="finished_at")
    outcome = serializers.CharField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    message = serializers.CharField(allow_null=True, allow_blank=True)


class RunningActivityOut(serializers.Serializer):
    """The action step (or undo) the workflow waits on, with this round's attempts."""

    step = serializers.CharField()
    activity = serializers.CharField()
    undo = serializers.BooleanField()
    round = serializers.IntegerField()
    idempotencyKey = serializers.CharField(source="idempotency_key")
    attempts = AttemptOut(many=True)


class ArchivedOut(serializers.Serializer):
    """An archived workflow's history is read from the archive store
    (an ``approvals.audit.archived.ArchivedState``)."""

    archivedAt = NullableTimestamp(source="archived_at")
    deleted = serializers.BooleanField()
    words = serializers.CharField()


class WorkflowDetail(WorkflowSummary):
    """A workflow with its state and history. Render with the context ``assignees``
    (``workflow_assignees``), ``history`` (``workflow_history``) and ``now``
    (``workflow_now``: open steps, next timer, running activity)."""

    engineStatus = serializers.CharField(source="status")
    data = serializers.DictField()  # type: ignore[assignment]
    assignees = serializers.SerializerMethodField()
    version = serializers.IntegerField()
    openSteps = serializers.SerializerMethodField()
    nextTimer = serializers.SerializerMethodField()
    activity = serializers.SerializerMethodField()
    history = serializers.SerializerMethodField()
    restartedFrom = serializers.SerializerMethodField()
    restartedAs = serializers.SerializerMethodField()
    archived = serializers.SerializerMethodField()

    @extend_schema_field(ArchivedOut(allow_null=True))
    def get_archived(self, workflow: Any) -> Any:
        """Null while the history is in the database; once its month is archived, when
        and, in words, that it is read from the archive (or was deleted after it)."""
        archived = self.context.get("archived")
        return None if archived is None else ArchivedOut(archived).data

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_restartedFrom(self, workflow: Any) -> Any:
        """The rolled-back workflow this one was started in place of."""
        return workflow_restart_links(history=self.context["history"]).restarted_from

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_restartedAs(self, workflow: Any) -> Any:
        """The new workflow this rolled-back one was started again as."""
        return workflow_restart_links(history=self.context["history"]).restarted_as

    @extend_schema_field(OpenStepOut(many=True))
    def get_openSteps(self, workflow: Any) -> Any:
        return OpenStepOut(self.context["now"].open_steps, many=True).data

    @extend_schema_field(TimerOut(allow_null=True))
    def get_nextTimer(self, workflow: Any) -> Any:
        timer = self.context["now"].next_timer
        return None if timer is None else TimerOut(timer).data

    @extend_schema_field(RunningActivityOut(allow_null=True))
    def get_activity(self, workflow: Any) -> Any:
        running = self.context["now"].activity
        return None if running is None else RunningActivityOut(running).data

    @extend_schema_field(Assignee(many=True))
    def get_assignees(self, workflow: Any) -> Any:
        return Assignee(self.context["assignees"], many=True).data

    @extend_schema_field(HistoryItem(many=True))
    def get_history(self, workflow: Any) -> Any:
        return HistoryItem(self.context["history"], many=True).data


class WorkflowSearchQuery(RequestBody):
    """The search's paging; its filters are approvals.web.search.WorkflowSearch."""

    limit = serializers.IntegerField(min_value=1, max_value=200, default=50)
    offset = serializers.IntegerField(min_value=0, max_value=100000, default=0)


class WorkflowSearchResponse(serializers.Serializer):
    workflows = WorkflowSummary(many=True)


class DraftSubject(RequestBody):
    """A draft's subject: either part may still be blank (both are needed to submit)."""

    type = Text(pattern=r"^[A-Za-z0-9_.\-]*$", max_length=64, allow_blank=True, default="")
    id = Text(max_length=128, allow_blank=True, default="")


class DraftBody(RequestBody):
    """A draft as saved or replaced: only the data's types and limits are checked."""

    template = Text(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)
    subject = DraftSubject(required=False)
    data = JsonObjectField(default=dict)  # type: ignore[assignment]


class DraftOut(serializers.Serializer):
    """A draft (a ``Draft``), as its author reads it."""

    draftId = serializers.UUIDField(source="pk")
    template = serializers.CharField(source="template_key")
    subject = SubjectOf(source="*")
    data = serializers.DictField()  # type: ignore[assignment]
    idempotencyKey = serializers.CharField(
        source="idempotency_key", help_text="The Idempotency-Key its submission starts with."
    )
    workflowId = serializers.UUIDField(
        source="workflow_id", allow_null=True, help_text="Set once the draft is submitted."
    )
    createdAt = Timestamp(source="created_at")
    updatedAt = Timestamp(source="updated_at")
    submittedAt = NullableTimestamp(source="submitted_at")


class DraftListResponse(serializers.Serializer):
    drafts = DraftOut(many=True)


class ErrorBody(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    requestId = serializers.CharField()
    workflowId = serializers.UUIDField(
        required=False,
        help_text=(
            "With WORKFLOW_ALREADY_RUNNING and WORKFLOW_ALREADY_FINISHED: the workflow "
            "that holds the subject."
        ),
    )


class ErrorResponse(serializers.Serializer):
    error = ErrorBody()


class AttachmentRequest(RequestBody):
    """A file added to a request (multipart/form-data)."""

    requestId = RequestIdField()
    file = serializers.FileField(
        allow_empty_file=True,  # refused as no accepted type (422), with a sentence
        help_text=(
            "A PDF, PNG, JPEG, WebP or HEIC file, told by its content (not its name), "
            "at most APPROVALS_FILE_MAX_BYTES (10 MB unless the server says otherwise)."
        ),
    )


class AttachmentResponse(serializers.Serializer):
    """An attachment's answer (a ``services.attachments.AttachmentAdded``)."""

    status = serializers.CharField(source="result.status")
    version = serializers.IntegerField(source="result.version")
    duplicate = serializers.BooleanField(source="result.duplicate")
    sha256 = serializers.CharField(help_text="The file's SHA-256: its name in the download URL")
    name = serializers.CharField()
    size = serializers.IntegerField(help_text="Bytes")
    contentType = serializers.CharField(
        source="content_type", help_text="The type the content was recognised as"
    )
