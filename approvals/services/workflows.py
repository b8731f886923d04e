"""Starting workflows and the commands people and systems send them."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction

from templates_engine import commands as cmd
from templates_engine import start_policy as policy
from templates_engine.start_policy import StartPolicy

from .. import access
from ..definitions import definition_for
from ..models import StartRequest, User, Workflow, WorkflowTemplate
from ..models.workflows import ACTIVE_STATUSES
from ..runtime.commands import (
    BUSY,
    WORKFLOW_NOT_FOUND,
    Actor,
    Busy,
    CommandResult,
    WorkflowNotFound,
    command_execute,
)
from ..selectors.templates import workflow_template_latest

TEMPLATE_NOT_FOUND = "No published workflow template with key {key!r}."
IDEMPOTENCY_KEY_REUSED = "This Idempotency-Key was used with a different request body."
# Visible ASCII: a header value survives every proxy as sent; 255 is the column's length.
IDEMPOTENCY_KEY_PATTERN = r"^[!-~]{1,255}$"
IDEMPOTENCY_KEY_INVALID = "Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces)."
WORKFLOW_ALREADY_RUNNING = (
    "A {template} workflow for {subject_type} {subject_id} is already running: {workflow_id}."
)
WORKFLOW_ALREADY_FINISHED = (
    "A {template} workflow for {subject_type} {subject_id} has already run ({workflow_id}); "
    "this workflow template starts one per subject."
)
# Inserts that lose a race for a subject and then find its winner already finished
# (a start that completes at once) try again; two rounds are enough in practice.
MAX_SUBJECT_RETRIES = 3


def idempotency_key_valid(key: str) -> bool:
    return re.fullmatch(IDEMPOTENCY_KEY_PATTERN, key) is not None


def start_body_hash(
    *, template_key: str, subject_type: str, subject_id: str, data: dict[str, Any]
) -> str:
    """What an Idempotency-Key is bound to: the start's workflow template, subject and
    data. The same key with another hash is a reuse, not a repeat. (The recipe is the
    one the API used on its request body, so keys stored before still replay.)"""
    body = {
        "template": template_key,
        "subject": {"type": subject_type, "id": subject_id},
        "data": data,
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class TemplateNotFound(Exception):
    pass


class IdempotencyKeyReused(Exception):
    pass


class SubjectTaken(Exception):
    """The template's start policy refuses a start for this subject; ``workflow_id``
    names the workflow that holds it (running, or finished)."""

    def __init__(self, message: str, workflow_id: uuid.UUID) -> None:
        super().__init__(message)
        self.workflow_id = workflow_id


class WorkflowAlreadyRunning(SubjectTaken):
    pass


class WorkflowAlreadyFinished(SubjectTaken):
    pass


@dataclass(frozen=True)
class StartResult:
    workflow_id: uuid.UUID
    template_version: int
    status: str
    version: int
    replayed: bool = False
    # The start policy ``use_existing`` answered with a workflow already running.
    existing: bool = False

    def recorded(self) -> dict[str, Any]:
        """What an Idempotency-Key's row keeps of the first start, to replay it."""
        return {
            "workflowId": str(self.workflow_id),
            "templateVersion": self.template_version,
            "status": self.status,
            "version": self.version,
            "existing": self.existing,
        }

    @classmethod
    def replay(cls, recorded: dict[str, Any]) -> StartResult:
        return cls(
            workflow_id=uuid.UUID(recorded["workflowId"]),
            template_version=recorded["templateVersion"],
            status=recorded["status"],
            version=recorded["version"],
            replayed=True,
            existing=recorded.get("existing", False),
        )

    @classmethod
    def of_existing(cls, wf: Workflow) -> StartResult:
        return cls(
            workflow_id=wf.pk,
            template_version=wf.template_version,
            status=wf.public_status,
            version=wf.version,
            existing=True,
        )


def workflow_start(
    *,
    submitter: User,
    template_key: str,
    subject_type: str,
    subject_id: str,
    data: dict[str, Any],
    idempotency_key: str | None = None,
    scope: access.Scope | None = None,
) -> StartResult:
    """Start a workflow on the newest published version of a workflow template.

    With an ``idempotency_key`` a repeat returns the first response; concurrent
    repeats create one workflow (the second waits on the key's unique index).
    The template's start policy decides what a start for a subject that has a running
    or a finished workflow does: raises WorkflowAlreadyRunning or
    WorkflowAlreadyFinished, or answers with the running one (``existing``).
    Raises access.Forbidden when the submitter (or the token's ``scope``) may not.
    """
    tenant_id = submitter.tenant_id
    assert tenant_id is not None
    access.check_may_start(submitter, template_key, scope)
    template = workflow_template_latest(tenant_id=tenant_id, key=template_key)
    if template is None:
        raise TemplateNotFound(TEMPLATE_NOT_FOUND.format(key=template_key))
    with transaction.atomic():
        request = None
        if idempotency_key:
            body_hash = start_body_hash(
                template_key=template_key,
                subject_type=subject_type,
                subject_id=subject_id,
                data=data,
            )
            try:
                with transaction.atomic():
                    request = StartRequest.objects.create(
                        tenant_id=tenant_id,
                        user=submitter,
                        key=idempotency_key,
                        body_hash=body_hash,
                    )
            except IntegrityError:
                prior = StartRequest.objects.get(
                    tenant_id=tenant_id, user=submitter, key=idempotency_key
                )
                if prior.body_hash != body_hash:
                    raise IdempotencyKeyReused(IDEMPOTENCY_KEY_REUSED) from None
                assert prior.response is not None
                return StartResult.replay(prior.response)
        started = _start_for_subject(
            submitter=submitter,
            template=template,
            subject_type=subject_type,
            subject_id=subject_id,
            data=data,
        )
        if request is not None:
            request.workflow_id = started.workflow_id
            request.response = started.recorded()
            request.save(update_fields=["workflow", "response"])
    return started


def _start_for_subject(
    *,
    submitter: User,
    template: WorkflowTemplate,
    subject_type: str,
    subject_id: str,
    data: dict[str, Any],
) -> StartResult:
    """Start a workflow as the template's start policy allows for its subject.

    The policy is checked by a query first (the clear answer) and held by the partial
    unique index ``workflow_subject_running`` (the race): of two starts inserting at
    once the second waits for the first's commit, fails, and is answered as if it had
    come after it."""
    rule = definition_for(template.pk).start_policy
    subject = _SubjectOf(template, subject_type, subject_id)
    for _ in range(MAX_SUBJECT_RETRIES):
        answer = _policy_answer(rule, subject)
        if answer is not None:
            return answer
        try:
            with transaction.atomic():
                return _start_new(submitter, template, subject, data, rule)
        except IntegrityError as exc:
            if "workflow_subject_running" not in str(exc):
                raise
    raise Busy(BUSY)


@dataclass(frozen=True)
class _SubjectOf:
    template: WorkflowTemplate
    type: str
    id: str

    def workflows(self) -> Any:
        return Workflow.objects.filter(
            tenant_id=self.template.tenant_id,
            template_key=self.template.key,
            subject_type=self.type,
            subject_id=self.id,
        )

    def message(self, text: str, workflow_id: uuid.UUID) -> str:
        return text.format(
            template=self.template.key,
            subject_type=self.type,
            subject_id=self.id,
            workflow_id=workflow_id,
        )


def _policy_answer(rule: StartPolicy, subject: _SubjectOf) -> StartResult | None:
    """The answer the policy gives without starting, or None to start a new one."""
    if rule.while_running != policy.ALLOW:
        running = subject.workflows().filter(status__in=ACTIVE_STATUSES).order_by("created_at")
        wf = running.first()
        if wf is not None:
            if rule.while_running == policy.USE_EXISTING:
                return StartResult.of_existing(wf)
            raise WorkflowAlreadyRunning(subject.message(WORKFLOW_ALREADY_RUNNING, wf.pk), wf.pk)
    if rule.after_finished == policy.REJECT:
        finished = subject.workflows().exclude(status__in=ACTIVE_STATUSES)
        done = finished.order_by("-created_at").first()
        if done is not None:
            raise WorkflowAlreadyFinished(
                subject.message(WORKFLOW_ALREADY_FINISHED, done.pk), done.pk
            )
    return None


def _start_new(
    submitter: User,
    template: WorkflowTemplate,
    subject: _SubjectOf,
    data: dict[str, Any],
    rule: StartPolicy,
) -> StartResult:
    assert submitter.tenant_id is not None
    wf = Workflow.objects.create(
        tenant_id=submitter.tenant_id,
        template=template,
        template_key=template.key,
        template_version=template.version,
        subject_type=subject.type,
        subject_id=subject.id,
        subject_exclusive=rule.while_running != policy.ALLOW,
        data=data,
        submitter=submitter,
    )
    result = command_execute(
        tenant_id=submitter.tenant_id,
        workflow_id=wf.pk,
        command=cmd.Start(data, submitter.username),
        actor=Actor(submitter, "submitter"),
    )
    return StartResult(
        workflow_id=wf.pk,
        template_version=template.version,
        status=result.status,
        version=result.version,
    )


def workflow_decide(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    decision: str,
    request_id: str,
    comment: str = "",
    on_behalf_of: str | None = None,
    delegate_to: str | None = None,
    data: dict[str, Any] | None = None,
) -> CommandResult:
    """Record a decision. Raises WorkflowNotFound when the user may not read the
    workflow (never a hint that it exists), access.Forbidden when the account may not
    decide at all, and CommandRejected for the engine's refusals (not your step,
    segregation of duties)."""
    assert user.tenant_id is not None
    _readable(user, workflow_id)
    access.check_may_decide(user)
    return command_execute(
        tenant_id=user.tenant_id,
        workflow_id=workflow_id,
        command=cmd.Decide(user.username, decision, comment, on_behalf_of, delegate_to, data),
        actor=Actor(user, "approver"),
        request_id=request_id,
    )


def workflow_signal(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    name: str,
    payload: dict[str, Any],
    request_id: str,
    scope: access.Scope | None = None,
) -> CommandResult:
    """Deliver a signal from one of the senders its step names. Sending grants no
    right to read the workflow. Raises WorkflowNotFound when the user may neither
    send it nor read the workflow, access.Forbidden when they may read but not send."""
    assert user.tenant_id is not None
    wf = _in_tenant(user, workflow_id)
    if not access.may_signal(user, definition_for(wf.template_id), name, scope):
        if access.may_read_workflow(user, wf):
            raise access.Forbidden(access.FORBIDDEN_SIGNAL.format(name=name))
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    role = "integration" if access.has_role(user, access.Role.INTEGRATION) else "admin"
    return command_execute(
        tenant_id=user.tenant_id,
        workflow_id=workflow_id,
        command=cmd.Signal(name, payload),
        actor=Actor(user, role),
        request_id=request_id,
    )


def workflow_cancel(
    *, user: User, workflow_id: uuid.UUID | str, reason: str, request_id: str
) -> CommandResult:
    """Cancel a workflow: its submitter or an organisation admin."""
    assert user.tenant_id is not None
    wf = _readable(user, workflow_id)
    if not access.may_cancel(user, wf):
        raise access.Forbidden(access.FORBIDDEN_CANCEL)
    return command_execute(
        tenant_id=user.tenant_id,
        workflow_id=workflow_id,
        command=cmd.Cancel(user.username, reason),
        actor=Actor(user, "submitter" if wf.submitter_id == user.pk else "admin"),
        request_id=request_id,
    )


def workflow_reassign(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    from_user: str,
    to_user: str,
    request_id: str,
    comment: str = "",
) -> CommandResult:
    """Move a task from one assignee to another: an organisation admin, recorded in the
    history. The engine refuses a move to the submitter (segregation of duties)."""
    assert user.tenant_id is not None
    wf = _readable(user, workflow_id)
    if not access.may_reassign(user, wf):
        raise access.Forbidden(access.FORBIDDEN_REASSIGN)
    return command_execute(
        tenant_id=user.tenant_id,
        workflow_id=workflow_id,
        command=cmd.Reassign(user.username, from_user, to_user, comment),
        actor=Actor(user, "admin"),
        request_id=request_id,
    )


def _in_tenant(user: User, workflow_id: uuid.UUID | str) -> Workflow:
    try:
        return Workflow.objects.get(tenant_id=user.member_tenant_id, pk=workflow_id)
    except (Workflow.DoesNotExist, ValueError, TypeError, DjangoValidationError) as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc


def _readable(user: User, workflow_id: uuid.UUID | str) -> Workflow:
    try:
        wf = access.workflow_with_reading(user, workflow_id)
    except (ValueError, TypeError, DjangoValidationError) as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc
    if wf is None or not access.may_read_workflow(user, wf):
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    return wf
