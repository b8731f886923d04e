"""The one command path. Every input to a workflow (a click, an API call, a timer, an
activity's outcome, a signal) comes through ``command_execute``:

    in one transaction:
      lock the workflow row (SELECT ... FOR UPDATE)
      a request id already recorded -> return the recorded result, duplicate
      events = decide(definition, state, command, ctx)
      append events at seq = version + 1 ... (UNIQUE (workflow, seq): a second guard)
      move the status through the django-fsm transition each event names
      project the events: inbox, timers, activity outbox
    after commit: hand due activity attempts to the workers

Nothing else writes events.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction

from templates_engine import CommandRejected, State, decide, evolve, public_status, replay
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.context import Context
from templates_engine.definition import Definition
from templates_engine.events import event_from_dict
from templates_engine.snapshot import state_from_dict, state_to_dict

from .. import clock, metrics
from ..definitions import definition_for
from ..models import User, Workflow, WorkflowEvent
from . import store
from .chain import EventRow, event_hash
from .directory import TenantDirectory
from .projections import project

MAX_CONFLICT_RETRIES = 3

WORKFLOW_NOT_FOUND = "No such workflow."
BUSY = "The workflow is busy; try again."
REQUEST_ID_REUSED = "This requestId was already used for a different command; send a new requestId."

# The django-fsm transition each status-changing event goes through.
_TRANSITIONS: dict[type[ev.Event], str] = {
    ev.WorkflowStarted: "begin",
    ev.WorkflowCompleted: "complete",
    ev.CompensationStarted: "compensate",
    ev.WorkflowRolledBack: "roll_back",
    ev.WorkflowRejected: "reject",
    ev.CompensationFailed: "fail_compensation",
    ev.WorkflowCancelled: "cancel",
    ev.StepRetried: "retry_step",
    ev.CompensationRetried: "retry_compensation",
}


class WorkflowNotFound(Exception):
    pass


class Busy(Exception):
    """Version conflicts kept happening; the caller may retry."""


class RequestIdReused(Exception):
    """The request id was recorded with another command or from another actor."""


@dataclass(frozen=True)
class Actor:
    """Who issued a command, as the history records it."""

    user: User | None
    role: str  # submitter | approver | admin | system | integration


SYSTEM = Actor(None, "system")


@dataclass(frozen=True)
class CommandResult:
    workflow_id: uuid.UUID
    status: str
    version: int
    duplicate: bool = False


def command_execute(
    *,
    tenant_id: int,
    workflow_id: uuid.UUID | str,
    command: cmd.Command,
    actor: Actor = SYSTEM,
    request_id: str | None = None,
) -> CommandResult:
    """Apply ``command`` to the workflow through the one path; see the module doc.

    Raises WorkflowNotFound (also for another tenant's workflow), CommandRejected
    (nothing changed), or Busy after repeated version conflicts.
    """
    for _ in range(MAX_CONFLICT_RETRIES):
        try:
            with transaction.atomic():
                return _execute_locked(tenant_id, workflow_id, command, actor, request_id)
        except IntegrityError as exc:
            if "event_seq" not in str(exc) and "event_request_id" not in str(exc):
                raise
            metrics.VERSION_CONFLICTS.inc()
    raise Busy(BUSY)


def _execute_locked(
    tenant_id: int,
    workflow_id: uuid.UUID | str,
    command: cmd.Command,
    actor: Actor,
    request_id: str | None,
) -> CommandResult:
    try:
        wf = Workflow.objects.select_for_update(of=("self",)).get(
            tenant_id=tenant_id, pk=workflow_id
        )
    except (Workflow.DoesNotExist, ValueError, TypeError, DjangoValidationError) as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc
    fingerprint = command_fingerprint(command, actor) if request_id else ""
    if request_id:
        # A separate statement, after the lock: under READ COMMITTED it sees what the
        # transaction that held the lock committed. (A subquery inside the locking
        # SELECT would read the older snapshot and miss a duplicate.)
        rows = store.fetch(_RECORDED_SQL, [store.uuid_param(Workflow, wf.pk), request_id])
        recorded = store.json_value(rows[0][0]) if rows else None
        if recorded is not None:
            # A result recorded before fingerprints were kept has none: a duplicate.
            if recorded.get("command", fingerprint) != fingerprint:
                raise RequestIdReused(REQUEST_ID_REUSED)
            metrics.DUPLICATES.labels(command.type).inc()
            return CommandResult(wf.pk, recorded["status"], recorded["version"], duplicate=True)
    definition = definition_for(wf.template_id)
    state = load_state(wf, definition)
    now = clock.now()
    directory = TenantDirectory(tenant_id)
    ctx = Context(now=now.timestamp(), rng=random.Random(), directory=directory)
    events = decide(definition, state, command, ctx)
    new_state = state
    for event in events:
        new_state = evolve(new_state, event)
    if events:
        _append(wf, events, new_state, actor, request_id, fingerprint, now, directory)
    project(wf, state, new_state, command, now, directory, events)
    return CommandResult(wf.pk, wf.public_status, wf.version)


_RECORDED_SQL = (
    f"SELECT result FROM {WorkflowEvent._meta.db_table} WHERE workflow_id = %s AND request_id = %s"
)


def load_state(wf: Workflow, definition: Definition) -> State:
    """The workflow's state: its snapshot, or a replay when the snapshot is stale."""
    state = state_from_dict(wf.snapshot) if wf.snapshot else None
    if state is None or wf.version == 0:
        payloads = WorkflowEvent.objects.filter(workflow_id=wf.pk).order_by("seq")
        state = replay(
            definition, (event_from_dict(p) for p in payloads.values_list("payload", flat=True))
        )
    return state


def _append(
    wf: Workflow,
    events: list[ev.Event],
    new_state: State,
    actor: Actor,
    request_id: str | None,
    fingerprint: str,
    now: Any,
    directory: TenantDirectory,
) -> None:
    for event in events:
        transition = _TRANSITIONS.get(type(event))
        if isinstance(event, ev.CompensationResolved):
            transition = f"settle_{event.outcome.lower()}"
        if transition is not None:
            getattr(wf, transition)()
    if wf.status != new_state.status:
        raise AssertionError(f"status machine disagrees: {wf.status} != {new_state.status}")
    status = public_status(new_state)
    version = wf.version + len(events)
    behalf_ids = directory.user_ids(_behalf_names(events))
    rows = []
    prev = wf.last_hash
    for i, event in enumerate(events):
        first = i == 0
        behalf = getattr(event, "on_behalf_of", None)
        row = EventRow(
            workflow_id=wf.pk,
            seq=wf.version + i + 1,
            type=event.type,
            payload=event.to_dict(),
            request_id=request_id if first else None,
            actor_id=actor.user.pk if actor.user is not None else None,
            role=actor.role,
            on_behalf_of_id=behalf_ids.get(behalf) if isinstance(behalf, str) else None,
            created_at=now,
            prev_hash=prev,
        )
        prev = event_hash(row)
        result = (
            {"status": status, "version": version, "command": fingerprint}
            if first and request_id
            else None
        )
        rows.append((wf.tenant_id, *row, event.schema_version, result, prev))
    store.insert(WorkflowEvent, _EVENT_COLUMNS, rows)
    wf.version = version
    wf.last_hash = prev
    wf.public_status = status
    wf.current_step = new_state.step or ""
    wf.data = dict(new_state.data)
    wf.snapshot = state_to_dict(new_state)
    store.update(
        Workflow,
        wf.pk,
        {
            "status": wf.status,
            "version": wf.version,
            "last_hash": wf.last_hash,
            "public_status": wf.public_status,
            "current_step": wf.current_step,
            "data": wf.data,
            "snapshot": wf.snapshot,
            "updated_at": now,
        },
    )


_EVENT_COLUMNS = ("tenant", *EventRow._fields, "schema_version", "result", "hash")


def command_fingerprint(command: cmd.Command, actor: Actor) -> str:
    """What a request id is bound to: the command, its every field, and who sent it.
    The same id with another fingerprint is a reuse, not a duplicate."""
    content = {
        "type": command.type,
        "fields": asdict(command),  # type: ignore[call-overload]
        "actor": actor.user.pk if actor.user is not None else None,
        "role": actor.role,
    }
    blob = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _behalf_names(events: list[ev.Event]) -> set[str]:
    return {b for e in events if isinstance(b := getattr(e, "on_behalf_of", None), str)}


__all__ = [
    "Actor",
    "Busy",
    "CommandRejected",
    "CommandResult",
    "RequestIdReused",
    "SYSTEM",
    "WorkflowNotFound",
    "command_execute",
    "load_state",
]
