"""Starting workflows and the commands people and systems send them."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError

from templates_engine import commands as cmd
from templates_engine import start_policy as policy
from templates_engine.start_policy import StartPolicy

from .. import access, clock
from ..definitions import definition_for
from ..models import StartRequest, User, Workflow, WorkflowTemplate
from ..models.workflows import ACTIVE_STATUSES
from ..runtime import store
from ..runtime.commands import (
    BUSY,
    WORKFLOW_NOT_FOUND,
    Actor,
    Busy,
    CommandResult,
    LockReads,
    TemplateRef,
    WorkflowNotFound,
    command_execute,
    command_start,
)
from ..runtime.directory import VERSION_SUBQUERY
from ..runtime.tenant_scope import acting_for
from ..selectors.departments import DEPARTMENTS_JSON_SQL, departments_rows
from ..selectors.rates import RATES_JSON_SQL, conversion_for, rates_query, rates_rows
from .departments import department_check

TEMPLATE_NOT_FOUND = "No published workflow template with key {key!r}."
TEMPLATE_RETIRED = (
    "The workflow template {key!r} is retired: it takes no new workflows "
    "(the ones already running finish)."
)
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


# A signal must be one the workflow's template declares (one that arrives early is kept
# for the step that will wait for it), and its payload stays small: a kept signal is
# carried in the workflow's state until a step takes it.
SIGNAL_PAYLOAD_MAX_BYTES = 16 * 1024
SIGNAL_TOO_LARGE = (
    "A signal's payload may be at most 16 KB of JSON; this one is {size} bytes. "
    "Nothing was delivered."
)
SIGNAL_UNDECLARED = (
    "This workflow's template declares no signal named {name!r}, so it was not delivered."
)
SIGNAL_PAYLOAD_TOO_LARGE = "SIGNAL_PAYLOAD_TOO_LARGE"
SIGNAL_NOT_DECLARED = "SIGNAL_NOT_DECLARED"


class SignalRefused(Exception):
    """A signal that is not delivered (nothing stored); ``code`` names why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TemplateNotFound(Exception):
    pass


class TemplateRetired(TemplateNotFound):
    """The workflow template exists but was retired: no new starts."""


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
    origin: dict[str, Any] | None = None,
) -> StartResult:
    """Start a workflow on the newest published version of a workflow template.
    ``origin`` names what files it in the submitter's name (a schedule and who made
    it); the history records it.

    With an ``idempotency_key`` a repeat returns the first response; concurrent
    repeats create one workflow (the second waits on the key's unique index).
    The template's start policy decides what a start for a subject that has a running
    or a finished workflow does: raises WorkflowAlreadyRunning or
    WorkflowAlreadyFinished, or answers with the running one (``existing``). The
    policy is read in the first round trip (the clear answer) and held by the partial
    unique index ``workflow_subject_running`` (the race: of two starts inserting at
    once the second fails at COMMIT and is tried again, to be answered as if it had
    come after the first). Raises access.Forbidden when the submitter (or the
    token's ``scope``) may not, the template's start role read in the first trip.

    Two round trips on PostgreSQL: BEGIN, the template, the subject's workflows with the
    directory version, and the key's claim together; the workflow, its events,
    projections and COMMIT together.
    """
    access.check_may_start_at_all(submitter, template_key, scope)
    start = _Start(submitter, template_key, subject_type, subject_id, data, idempotency_key, origin)
    for _ in range(MAX_SUBJECT_RETRIES):
        try:
            return start.run()
        except IntegrityError as exc:
            if "workflow_subject_running" not in str(exc):
                raise
    raise Busy(BUSY)


@dataclass(frozen=True)
class _Start:
    submitter: User
    template_key: str
    subject_type: str
    subject_id: str
    data: dict[str, Any]
    idempotency_key: str | None
    origin: dict[str, Any] | None = None

    def run(self) -> StartResult:
        tenant_id = self.submitter.member_tenant_id
        key = self.idempotency_key
        subject = [tenant_id, self.template_key, self.subject_type, self.subject_id]
        # The rates go with the subject's workflows, before the template says which field
        # holds a currency (selectors.rates): no statement of their own.
        rates = rates_query(tenant_id=tenant_id, data=self.data, now=clock.now())
        subject_sql = _SUBJECT_SQL
        subject_params = [*_ACTIVE, *subject, *_ACTIVE, *subject, tenant_id]
        if rates:
            subject_sql, subject_params = _SUBJECT_RATES_SQL, [*subject_params, *rates[1]]
        reads: list[tuple[str, list[Any]]] = [
            (
                _LATEST_SQL,
                [*access.start_facts_params(self.submitter), tenant_id, self.template_key],
            ),
            (subject_sql, subject_params),
        ]
        body_hash = ""
        if key:
            body_hash = start_body_hash(
                template_key=self.template_key,
                subject_type=self.subject_type,
                subject_id=self.subject_id,
                data=self.data,
            )
            now = store.param(StartRequest, "created_at", clock.now())
            reads.append((_CLAIM_SQL, [tenant_id, self.submitter.pk, key, body_hash, now]))
        with store.pipelined(count_inbox=True), acting_for(tenant_id), store.gathered_writes():
            latest, workflows, *claimed = store.fetch_many(reads)
            if not latest:
                raise TemplateNotFound(TEMPLATE_NOT_FOUND.format(key=self.template_key))
            if latest[0][3] is not None:
                raise TemplateRetired(TEMPLATE_RETIRED.format(key=self.template_key))
            # The template's start role, read with it (who it names, if anyone).
            facts = access.role_facts_of(latest[0][5 : 5 + access.START_FACTS_COLUMNS])
            access.check_may_start_named(self.submitter, latest[0][4], facts)
            if key and not claimed[0]:
                # Another start holds the key (the claim waited for it to commit).
                prior = StartRequest.objects.get(tenant_id=tenant_id, user=self.submitter, key=key)
                if prior.body_hash != body_hash:
                    raise IdempotencyKeyReused(IDEMPOTENCY_KEY_REUSED)
                assert prior.response is not None
                return StartResult.replay(prior.response)
            template = TemplateRef(*latest[0][:3])
            rule = definition_for(template.id).start_policy
            running, finished, directory_version, departments, *rated = workflows[0]
            rate_rows = rates_rows(rated[0]) if rated else []
            started = self._policy_answer(rule, running, finished)
            if started is None:
                schema = definition_for(template.id).schema
                department_check(
                    schema=schema, data=self.data, departments=departments_rows(departments)
                )
                conversion = conversion_for(rate_rows, data=self.data, schema=schema)
                result = command_start(
                    tenant_id=tenant_id,
                    template=template,
                    subject_type=self.subject_type,
                    subject_id=self.subject_id,
                    data=self.data,
                    submitter=self.submitter,
                    directory_version=directory_version,
                    exclusive=rule.while_running != policy.ALLOW,
                    origin=self.origin,
                    conversion=conversion,
                )
                started = StartResult(
                    workflow_id=result.workflow_id,
                    template_version=template.version,
                    status=result.status,
                    version=result.version,
                )
            if key:
                store.update(
                    StartRequest,
                    claimed[0][0][0],
                    {"workflow": started.workflow_id, "response": started.recorded()},
                )
        return started

    def _policy_answer(self, rule: StartPolicy, running: Any, finished: Any) -> StartResult | None:
        """The answer the policy gives without starting, or None to start a new one."""
        if rule.while_running != policy.ALLOW and running is not None:
            if rule.while_running == policy.USE_EXISTING:
                return StartResult.of_existing(Workflow.objects.get(pk=running))
            raise WorkflowAlreadyRunning(self._message(WORKFLOW_ALREADY_RUNNING, running), running)
        restart = bool(self.origin and self.origin.get("restarted_from"))
        if rule.after_finished == policy.REJECT and finished is not None and not restart:
            raise WorkflowAlreadyFinished(
                self._message(WORKFLOW_ALREADY_FINISHED, finished), finished
            )
        return None

    def _message(self, text: str, workflow_id: Any) -> str:
        return text.format(
            template=self.template_key,
            subject_type=self.subject_type,
            subject_id=self.subject_id,
            workflow_id=workflow_id,
        )


_LATEST_SQL = (
    f"SELECT t.id, t.key, t.version, t.retired_at, t.title, {access.START_FACTS_SQL}"
    f" FROM {store.table(WorkflowTemplate)} t"
    " WHERE t.tenant_id = %s AND t.key = %s ORDER BY t.version DESC LIMIT 1"
)
_ACTIVE = list(ACTIVE_STATUSES)
_IN_ACTIVE = ", ".join(["%s"] * len(_ACTIVE))


def _subject_workflow(status_test: str, order: str) -> str:
    """The id of one workflow of the subject whose status passes ``status_test``."""
    return (
        f"(SELECT id FROM {store.table(Workflow)} WHERE status {status_test} ({_IN_ACTIVE})"
        " AND tenant_id = %s AND template_key = %s AND subject_type = %s AND subject_id = %s"
        f" ORDER BY created_at {order} LIMIT 1)"
    )


# The subject's first running workflow and its last finished one, of this template, and
# the directory's version, and the departments the organisation keeps (one statement).
_SUBJECT_SQL = (
    f"SELECT {_subject_workflow('IN', 'ASC')}, {_subject_workflow('NOT IN', 'DESC')},"
    f" {VERSION_SUBQUERY}, {DEPARTMENTS_JSON_SQL}"
)
# The same, and the exchange rates a start of data naming a currency records.
_SUBJECT_RATES_SQL = f"{_SUBJECT_SQL}, {RATES_JSON_SQL}"
# The key's row, or nothing when another start has it (ON CONFLICT waits for that one
# to commit or roll back, so concurrent repeats make one workflow).
_CLAIM_SQL = (
    f"INSERT INTO {store.table(StartRequest)} (tenant_id, user_id, key, body_hash, created_at)"
    " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id"
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
    readable: access.ReadableWorkflow | None = None,
) -> CommandResult:
    """Record a decision. Raises WorkflowNotFound when the user may not read the
    workflow (never a hint that it exists), access.Forbidden when the account may not
    decide at all, and CommandRejected for the engine's refusals (not your step,
    segregation of duties). The read rule is asked with the lock, unless the caller
    asked it already (``readable``)."""
    assert user.tenant_id is not None
    if readable is not None:
        readable_for(user, workflow_id, readable)

    def authorize(wf: Workflow, facts: Sequence[Any]) -> None:
        # Asked with the lock, from what the locking query read (one round trip).
        if readable is None and not access.may_read_workflow(user, wf, access.read_facts_of(facts)):
            raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
        access.check_may_decide(user)
        if decision == "delegate" and delegate_to:
            access.check_may_hold_tasks_named(user.member_tenant_id, delegate_to)

    return command_execute(
        tenant_id=user.member_tenant_id,
        workflow_id=workflow_id,
        command=cmd.Decide(user.username, decision, comment, on_behalf_of, delegate_to, data),
        actor=Actor(user, "approver"),
        request_id=request_id,
        authorize=authorize,
        lock_reads=_read_facts(user) if readable is None else None,
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
    send it nor read the workflow, access.Forbidden when they may read but not send,
    and SignalRefused (nothing stored) for a payload over SIGNAL_PAYLOAD_MAX_BYTES or
    a signal the workflow's template does not declare."""
    assert user.tenant_id is not None
    size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
    if size > SIGNAL_PAYLOAD_MAX_BYTES:
        raise SignalRefused(SIGNAL_PAYLOAD_TOO_LARGE, SIGNAL_TOO_LARGE.format(size=size))
    wf = _in_tenant(user, workflow_id)
    definition = definition_for(wf.template_id)
    if not access.may_signal(user, definition, name, scope):
        if access.may_read_workflow(user, wf):
            raise access.Forbidden(access.FORBIDDEN_SIGNAL.format(name=name))
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    if not any(getattr(step, "signal", None) == name for step in definition.steps):
        raise SignalRefused(SIGNAL_NOT_DECLARED, SIGNAL_UNDECLARED.format(name=name))
    role = "integration" if access.has_role(user, access.Role.INTEGRATION) else "admin"
    return command_execute(
        tenant_id=user.tenant_id,
        workflow_id=workflow_id,
        command=cmd.Signal(name, payload),
        actor=Actor(user, role),
        request_id=request_id,
    )


def workflow_cancel(
    *,
    user: User,
    workflow_id: uuid.UUID | str,
    reason: str,
    request_id: str,
    readable: access.ReadableWorkflow | None = None,
) -> CommandResult:
    """Cancel a workflow: its submitter or an organisation admin. ``readable``: the read
    rule's answer when the caller asked it already."""
    assert user.tenant_id is not None
    wf = readable_for(user, workflow_id, readable).workflow
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
    history, never to herself nor to someone who cannot act (access). The engine
    refuses a move to the submitter (segregation of duties)."""
    assert user.tenant_id is not None
    wf = readable_for(user, workflow_id).workflow
    if not access.may_reassign(user, wf):
        raise access.Forbidden(access.FORBIDDEN_REASSIGN)
    access.check_may_reassign_to(user, to_user)
    access.check_may_hold_tasks_named(user.tenant_id, to_user)
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


def reader_addition(
    *,
    readable: access.ReadableWorkflow,
    command: cmd.Command,
    request_id: str,
    also: Callable[[User, Workflow], None] | None = None,
) -> CommandResult:
    """Record what someone who may read the request adds to its history (a comment, a
    file), named as its submitter, an organisation admin or else an approver. The read
    rule was asked once for the request (``readable``); ``also``, a check that raises,
    is asked with the lock held."""
    user, wf = readable.user, readable.workflow

    def authorize(locked: Workflow, facts: Sequence[Any]) -> None:
        if also is not None:
            also(user, locked)

    if wf.submitter_id == user.pk:
        role = "submitter"
    elif access.has_role(user, access.Role.ORG_ADMIN):
        role = "admin"
    else:
        role = "approver"
    return command_execute(
        tenant_id=user.member_tenant_id,
        workflow_id=wf.pk,
        command=command,
        actor=Actor(user, role),
        request_id=request_id,
        authorize=authorize,
    )


def _read_facts(user: User) -> LockReads:
    """The read rule's facts about ``user`` (approvals.access), read with the lock."""
    return LockReads(
        access.READ_FACTS_SQL,
        access.read_facts_params(user, clock.now()),
        access.READ_FACTS_COLUMNS,
    )


READ_ANSWER_MISMATCH = "the read rule's answer is not for this person and request {workflow_id}"


def readable_for(
    user: User,
    workflow_id: uuid.UUID | str,
    readable: access.ReadableWorkflow | None = None,
) -> access.ReadableWorkflow:
    """The read rule's answer for this request: ``readable`` when the caller asked it
    already (a page), else asked now. Raises WorkflowNotFound when the user may not
    read the workflow."""
    if readable is not None:
        if not readable.is_for(user, workflow_id):
            raise ValueError(READ_ANSWER_MISMATCH.format(workflow_id=workflow_id))
        return readable
    try:
        found = access.workflow_read(user, workflow_id)
    except (ValueError, TypeError, DjangoValidationError) as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc
    if found is None:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    return found
