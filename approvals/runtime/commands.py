"""The one command path. Every input to a workflow (a click, an API call, a timer, an
activity's outcome, a signal) comes through ``command_execute``:

    in one transaction:
      lock the workflow row (SELECT ... FOR UPDATE)
      a request id already recorded -> return the recorded result, duplicate
      events = decide(definition, state, command, ctx)
      append events at seq = version + 1 ... (UNIQUE (workflow, seq): a second guard)
      move the status through the django-fsm transition each event names in the
        status machine (templates_engine.status); refuse a move it does not hold
      project the events: inbox, timers, activity outbox
    after commit: hand due activity attempts to the workers

Nothing else writes events.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db import IntegrityError, connection
from django_fsm import TransitionNotAllowed

from templates_engine import CommandRejected, State, decide, evolve, public_status, replay
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.context import Context
from templates_engine.definition import Definition
from templates_engine.events import event_from_dict
from templates_engine.snapshot import plain, state_from_dict, state_to_dict
from templates_engine.state import TERMINAL
from templates_engine.status import StatusMoveRefused, recorded_move_check, transition_for

from .. import clock, metrics
from ..definitions import definition_for
from ..models import User, Workflow, WorkflowEvent, history_month
from ..words.data import workflow_summary
from . import store
from .archived import COMMAND_REFUSED, WORKFLOW_ARCHIVED, is_archived
from .chain import HASH_FORMAT, EventRow, event_hash, recorded_fields
from .directory import VERSION_SQL, VERSION_SUBQUERY, TenantDirectory
from .projections import project
from .tenant_scope import acting_for, cross_tenant_again

MAX_CONFLICT_RETRIES = 3

# The randomness of retry jitter (the delays it picks are recorded in the events). One
# generator per process, seeded from the OS, and again in each forked child, so that
# sibling workers do not jitter alike; seeding a new one per command cost more than
# deciding the command.
_RNG = random.Random()
os.register_at_fork(after_in_child=_RNG.seed)

WORKFLOW_NOT_FOUND = "No such workflow."
BUSY = "The workflow is busy; try again."
REQUEST_ID_REUSED = "This requestId was already used for a different command; send a new requestId."


_FINISHED = frozenset(str(s) for s in TERMINAL)


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
    recorded: int = 0  # events this command appended (none: it changed nothing)
    # What the command acted on, as it was before it, for an answer in words with no
    # read of the workflow (a duplicate's: what the first one acted on).
    acted_on: ActedOn | None = None


@dataclass(frozen=True)
class ActedOn:
    """The workflow a command acted on, before it: its workflow template version, the
    step it was at, its subject, its submitter, and the directory version the command
    read (``TenantDirectory(tenant_id, directory_version)`` answers from the process's
    cache)."""

    tenant_id: int
    template_id: int
    step: str
    subject_id: str
    submitter: str | None
    directory_version: int | None


@dataclass(frozen=True)
class LockReads:
    """What a caller reads with the lock, in the same statement: ``sql``, a list of
    ``columns`` expressions over the locked workflow as ``w``, and its ``params``. The
    values reach ``authorize`` (the read rule's facts: approvals.access)."""

    sql: str
    params: Sequence[Any]
    columns: int


# Asked with the locked workflow and the values of the LockReads, before anything else;
# raises to refuse.
Authorize = Callable[[Workflow, Sequence[Any]], None]


def command_execute(
    *,
    tenant_id: int,
    workflow_id: uuid.UUID | str,
    command: cmd.Command,
    actor: Actor = SYSTEM,
    request_id: str | None = None,
    authorize: Authorize | None = None,
    lock_reads: LockReads | None = None,
) -> CommandResult:
    """Apply ``command`` to the workflow through the one path; see the module doc.

    ``authorize`` is asked with the locked workflow and the values of ``lock_reads``
    (read by the locking statement) before anything else, and raises to refuse.
    Raises WorkflowNotFound (also for another tenant's workflow),
    CommandRejected (nothing changed), or Busy after repeated version conflicts.

    On PostgreSQL the whole command costs two round trips: BEGIN, the tenant it acts for
    (row-level security), the lock with the directory version, and the request id lookup
    travel together; the appended events, every
    projection and COMMIT travel together (``store.pipelined``).
    """
    pk = _workflow_pk(workflow_id)
    for _ in range(MAX_CONFLICT_RETRIES):
        try:
            with store.pipelined(count_inbox=True), acting_for(tenant_id), store.gathered_writes():
                return _execute_locked(
                    tenant_id, pk, command, actor, request_id, authorize, lock_reads
                )
        except IntegrityError as exc:
            if not _lost_the_race(exc):
                raise
            metrics.VERSION_CONFLICTS.inc()
    raise Busy(BUSY)


_EVENTS = WorkflowEvent._meta.db_table
_UNIQUE_VIOLATION = "23505"


def _lost_the_race(exc: IntegrityError) -> bool:
    """Another command appended the same seq (or recorded the same request id) first:
    a unique key of the events, in any month's partition (a partition's copy of the key
    has a name of its own), read from the error's diagnostics, not its text."""
    cause = exc.__cause__
    diag = getattr(cause, "diag", None)
    if getattr(cause, "sqlstate", None) != _UNIQUE_VIOLATION or diag is None:
        return False
    return str(diag.table_name or "").startswith(_EVENTS)


def command_execute_many(
    items: Sequence[tuple[int, uuid.UUID | str, cmd.Command]],
) -> list[CommandResult | Exception]:
    """Apply system commands to several workflows in one transaction: the timer poller's
    path. Each ``(tenant_id, workflow_id, command)`` is decided as ``command_execute``
    would decide it alone, under its workflow's row lock; the locks are taken in one
    statement, in workflow order (two pollers lock alike), and the events and
    projections of every workflow travel with one COMMIT (``store.gathered_writes``: the
    events of all in one INSERT, the workflow rows in one UPDATE): two round trips and
    one commit for the whole group instead of two and one per command.

    A workflow appears at most once (ValueError otherwise). The result of each item is
    its CommandResult, or the WorkflowNotFound or CommandRejected it met, which changed
    nothing of that workflow. Any other failure rolls the whole group back and is
    raised: the caller delivers the items one by one.

    The group may mix tenants (the poller claims across them): the locks are taken on
    the login role, then each tenant's workflows are decided and written acting for
    that tenant (``_by_tenant``).
    """
    pks = [_workflow_pk(workflow_id) for _, workflow_id, _ in items]
    if len(set(pks)) != len(pks):
        raise ValueError("a workflow appears more than once in one group")
    if not items:
        return []
    now = clock.now()
    results: list[CommandResult | Exception] = [WorkflowNotFound(WORKFLOW_NOT_FOUND)] * len(items)
    with store.pipelined():
        params = [store.uuid_param(Workflow, pk) for pk in sorted(pks)]
        found, version_rows = store.fetch_many(
            [(_lock_many_sql(len(params)), params), (VERSION_SQL, [])]
        )
        version = version_rows[0][0] if version_rows else None
        locked = {}
        for row in found:
            wf = store.instance(Workflow, row)
            locked[wf.pk] = wf
        tenants = _by_tenant(items)
        for tenant_id, indexes in tenants:
            with acting_for(tenant_id), store.gathered_writes():
                for i in indexes:
                    wf = locked.get(pks[i])
                    if wf is None or wf.tenant_id != tenant_id:
                        continue
                    definition = definition_for(wf.template_id)
                    directory = TenantDirectory(tenant_id, version)
                    try:
                        results[i] = _decide_and_write(
                            wf,
                            definition,
                            load_state(wf, definition),
                            items[i][2],
                            SYSTEM,
                            None,
                            "",
                            now,
                            directory,
                        )
                    except CommandRejected as exc:  # decided before anything was written
                        results[i] = exc
        if len(tenants) > 1:
            cross_tenant_again()  # COMMIT's deferred triggers read the tenants' rows
    return results


def _by_tenant(items: Sequence[tuple[int, Any, Any]]) -> list[tuple[int, list[int]]]:
    """The items' indexes by tenant, tenants in the order they first appear. Each
    tenant's part is decided acting for it and its writes sent in one statement after
    the tenant's setting: inside ``store.pipelined`` the settings travel with the
    writes, so a group of several tenants costs a statement per tenant but no round
    trip more than a group of one."""
    out: dict[int, list[int]] = {}
    for i, (tenant_id, _, _) in enumerate(items):
        out.setdefault(int(tenant_id), []).append(i)
    return list(out.items())


def _workflow_pk(workflow_id: uuid.UUID | str) -> uuid.UUID:
    if isinstance(workflow_id, uuid.UUID):
        return workflow_id
    try:
        return uuid.UUID(str(workflow_id))
    except (ValueError, TypeError, AttributeError) as exc:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND) from exc


def _execute_locked(
    tenant_id: int,
    pk: uuid.UUID,
    command: cmd.Command,
    actor: Actor,
    request_id: str | None,
    authorize: Authorize | None,
    lock_reads: LockReads | None,
) -> CommandResult:
    wf_param = store.uuid_param(Workflow, pk)
    now = clock.now()
    reads = lock_reads or _NO_READS
    # One round trip. The request id lookup is a separate statement after the lock:
    # under READ COMMITTED it sees what the transaction that held the lock committed
    # (a subquery inside the locking SELECT would read the older snapshot).
    queries: list[tuple[str, list[Any]]] = [
        (_lock_sql(reads.sql), [*reads.params, tenant_id, wf_param])
    ]
    if request_id:
        queries.append((_RECORDED_SQL, [wf_param, request_id, wf_param]))
    found, *recorded_rows = store.fetch_many(queries)
    if not found:
        raise WorkflowNotFound(WORKFLOW_NOT_FOUND)
    columns = found[0]
    read = len(columns) - reads.columns - 1
    wf = store.instance(Workflow, columns[:read])
    directory_version = columns[read]
    if authorize is not None:
        authorize(wf, columns[read + 1 :])
    # Only a finished workflow is ever archived: the running ones pay no lookup.
    if wf.status in _FINISHED and is_archived(tenant_id=tenant_id, workflow_id=pk):
        raise CommandRejected(WORKFLOW_ARCHIVED, COMMAND_REFUSED)
    fingerprint = command_fingerprint(command, actor) if request_id else ""
    if recorded_rows and recorded_rows[0]:
        recorded = store.json_value(recorded_rows[0][0][0])
        # A result recorded before fingerprints were kept has none: a duplicate.
        if recorded.get("command", fingerprint) != fingerprint:
            raise RequestIdReused(REQUEST_ID_REUSED)
        metrics.DUPLICATES.labels(command.type).inc()
        # What the first one acted on, so a repeat answers in the same words: the step
        # its first event names, and the submitter the snapshot keeps.
        kept = state_from_dict(wf.snapshot) if wf.snapshot else None
        submitter = kept.submitter if kept is not None else None
        step = recorded_rows[0][0][1] or ""
        acted_on = ActedOn(
            wf.tenant_id, wf.template_id, step, wf.subject_id, submitter, directory_version
        )
        return CommandResult(
            wf.pk, recorded["status"], recorded["version"], duplicate=True, acted_on=acted_on
        )
    definition = definition_for(wf.template_id)
    directory = TenantDirectory(tenant_id, directory_version)
    state = load_state(wf, definition)
    return _decide_and_write(
        wf, definition, state, command, actor, request_id, fingerprint, now, directory
    )


def _decide_and_write(
    wf: Workflow,
    definition: Definition,
    state: State,
    command: cmd.Command,
    actor: Actor,
    request_id: str | None,
    fingerprint: str,
    now: Any,
    directory: TenantDirectory,
) -> CommandResult:
    """Decide, append the events, project them: the part every command shares."""
    ctx = Context(now=now.timestamp(), rng=_RNG, directory=directory)
    events = decide(definition, state, command, ctx)
    new_state = state
    statuses = []
    for event in events:
        new_state = evolve(new_state, event)
        statuses.append(public_status(new_state))
    if events:
        # The inbox's summary line is a projection of the data: computed again only when
        # a command set the data (a start, a resubmission, a result or a signal kept).
        summary = (
            workflow_summary(definition, wf.subject_id, new_state.data)
            if new_state.data is not state.data
            else None
        )
        _append(
            wf, events, statuses, new_state, actor, request_id, fingerprint, now, directory, summary
        )
    project(wf, state, new_state, now, directory, events)
    acted_on = ActedOn(
        wf.tenant_id,
        wf.template_id,
        state.step or "",
        wf.subject_id,
        state.submitter,
        directory.version,
    )
    return CommandResult(
        wf.pk, wf.public_status, wf.version, recorded=len(events), acted_on=acted_on
    )


def command_start(
    *,
    tenant_id: int,
    template: TemplateRef,
    subject_type: str,
    subject_id: str,
    data: dict[str, Any],
    submitter: User,
    directory_version: int | None,
    exclusive: bool = False,
    origin: dict[str, Any] | None = None,
    conversion: dict[str, Any] | None = None,
) -> CommandResult:
    """Start a workflow: the new row, its first events and their projections, written
    in the caller's transaction (nothing to lock: nobody else knows the id yet, and no
    history to read). ``exclusive`` claims the subject while the workflow runs (the
    partial unique index ``workflow_subject_running``, see the start policies);
    ``origin`` (a schedule, and who made it) and ``conversion`` (the base currency and
    rates the conditions compare amounts at, selectors.rates) are recorded in the
    WorkflowStarted event. Raises CommandRejected when the data does not fit the schema."""
    now = clock.now()
    wf = Workflow(
        tenant_id=tenant_id,
        template_id=template.id,
        template_key=template.key,
        template_version=template.version,
        subject_type=subject_type,
        subject_id=subject_id,
        data=data,
        submitter=submitter,
        subject_exclusive=exclusive,
        created_at=now,
        updated_at=now,
    )
    definition = definition_for(template.id)
    return _decide_and_write(
        wf,
        definition,
        replay(definition, ()),
        cmd.Start(data, submitter.username, origin, conversion),
        Actor(submitter, "submitter"),
        None,
        "",
        now,
        TenantDirectory(tenant_id, directory_version),
    )


@dataclass(frozen=True)
class TemplateRef:
    """The published workflow template version a start pins."""

    id: int
    key: str
    version: int


_NO_READS = LockReads("", (), 0)


@lru_cache(maxsize=8)
def _lock_sql(reads: str) -> str:
    """The workflow, locked, with the directory's version and the caller's reads
    (``LockReads``). The version has no statement of its own; it is read in this
    statement's snapshot, so a directory change committed while the lock waited counts
    from the next command on, as one committed just after this command would."""
    return (
        f"SELECT {store.columns(Workflow, 'w')}, {VERSION_SUBQUERY}"
        + (f", {reads}" if reads else "")
        + f" FROM {store.table(Workflow)} w WHERE w.tenant_id = %s AND w.id = %s"
        + (" FOR UPDATE OF w" if connection.features.has_select_for_update_of else "")
    )


@lru_cache(maxsize=64)
def _lock_many_sql(count: int) -> str:
    """Several workflows locked at once, in the order of their ids (command_execute_many)."""
    marks = ", ".join(["%s"] * count)
    return (
        f"SELECT {store.columns(Workflow, 'w')} FROM {store.table(Workflow)} w"
        f" WHERE w.id IN ({marks}) ORDER BY w.id"
    ) + (" FOR UPDATE OF w" if connection.features.has_select_for_update_of else "")


# The month names the one partition to read (pruned when the plan runs).
_RECORDED_SQL = (
    f"SELECT result, payload->>'step' FROM {WorkflowEvent._meta.db_table}"
    " WHERE workflow_id = %s AND request_id = %s"
    " AND history_month = (SELECT date_trunc('month', created_at AT TIME ZONE 'UTC')::date"
    f" FROM {Workflow._meta.db_table} WHERE id = %s)"
)


def load_state(wf: Workflow, definition: Definition) -> State:
    """The workflow's state: its snapshot, or a replay when the snapshot is missing.
    A workflow with no events yet has the initial state; nothing to read."""
    state = state_from_dict(wf.snapshot) if wf.snapshot else None
    if wf.version == 0:
        state = replay(definition, ())
    elif state is None:
        payloads = WorkflowEvent.objects.filter(
            workflow_id=wf.pk, history_month=history_month(wf.created_at)
        ).order_by("seq")
        state = replay(
            definition, (event_from_dict(p) for p in payloads.values_list("payload", flat=True))
        )
    return state


def _append(
    wf: Workflow,
    events: list[ev.Event],
    statuses: list[str],
    new_state: State,
    actor: Actor,
    request_id: str | None,
    fingerprint: str,
    now: Any,
    directory: TenantDirectory,
    summary: tuple[str, str] | None = None,
) -> None:
    """Append the events and write the workflow's row. ``statuses`` is the workflow's
    status after each event; ``summary`` comes with a command that set the data (None:
    the data is as it was)."""
    status_before = wf.status
    status_moves_apply(wf, events, new_state.status)
    status = public_status(new_state)
    version = wf.version + len(events)
    head = {"status": status, "version": version, "command": fingerprint}
    rows, last_hash = _event_rows(wf, events, statuses, actor, request_id, head, now, directory)
    wf.version = version
    wf.last_hash = last_hash
    wf.public_status = status
    wf.current_step = new_state.step or ""
    wf.data = dict(new_state.data)
    wf.snapshot = state_to_dict(new_state)
    wf.updated_at = now
    if summary is not None:
        wf.summary, wf.amount_display = summary
    _workflow_write(wf, rows, status_before=status_before, data_changed=summary is not None)


def _event_rows(
    wf: Workflow,
    events: list[ev.Event],
    statuses: list[str],
    actor: Actor,
    request_id: str | None,
    head: dict[str, Any],
    now: Any,
    directory: TenantDirectory,
) -> tuple[list[tuple[Any, ...]], str]:
    """The rows of ``events`` as they are inserted, each hash chained to the one before
    from the workflow's last; and the new last hash. The first event carries the request
    id and, with one, the command's result (``head``)."""
    behalf_ids = directory.user_ids(_behalf_names(events))
    rows = []
    prev = wf.last_hash
    month = history_month(wf.created_at)
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
        result = head if first and request_id else None
        recorded = recorded_fields(
            actor=actor.user,
            status=statuses[i],
            template_key=wf.template_key,
            template_version=wf.template_version,
            subject_type=wf.subject_type,
            subject_id=wf.subject_id,
        )
        prev = event_hash(
            row,
            tenant_id=wf.tenant_id,
            schema_version=event.schema_version,
            result=result,
            recorded=recorded,
        )
        rows.append(
            (wf.tenant_id, *row, event.schema_version, result, recorded, HASH_FORMAT, prev, month)
        )
    return rows, prev


def _workflow_write(
    wf: Workflow, rows: list[tuple[Any, ...]], *, status_before: str, data_changed: bool
) -> None:
    """Insert the event rows and write the workflow's row: whole on a start, else only
    the columns a command changes."""
    if wf._state.adding:  # a start: the row is written once, with its first events
        store.insert(Workflow, _WORKFLOW_COLUMNS, [[getattr(wf, n) for n in _WORKFLOW_COLUMNS]])
        wf._state.adding = False
        store.insert(WorkflowEvent, _EVENT_COLUMNS, rows)
        return
    store.insert(WorkflowEvent, _EVENT_COLUMNS, rows)
    # Only the columns the command changed: the status and the data (with the summary
    # line, their projection) are indexed (the status's indexes, the full-text GIN over
    # data and summary), so leaving them out when they are as they were spares their
    # conversion, and PostgreSQL's comparison of them for a HOT update.
    values: dict[str, Any] = {
        "version": wf.version,
        "last_hash": wf.last_hash,
        "public_status": wf.public_status,
        "current_step": wf.current_step,
        "snapshot": wf.snapshot,
        "updated_at": wf.updated_at,
    }
    if wf.status != status_before:
        values["status"] = wf.status
    if data_changed:
        values.update(data=wf.data, summary=wf.summary, amount_display=wf.amount_display)
    store.update(Workflow, wf.pk, values)


def status_moves_apply(wf: Workflow, events: Sequence[ev.Event], status: str) -> None:
    """Move ``wf.status`` through the model's transition each event names in the status
    machine (templates_engine.status), before the row is written with plain SQL; it must
    end at ``status``, the state's. Raises StatusMoveRefused (nothing written) for a move
    the table does not hold, from the row's status as locked."""
    for event in events:
        before = wf.status
        target = recorded_move_check(type(event), before)
        if target != before:
            move = transition_for(type(event))
            assert move is not None
            try:
                getattr(wf, move.name)()
            except TransitionNotAllowed as exc:  # the model disagrees with the table
                raise StatusMoveRefused(str(exc)) from exc
    if wf.status != status:
        raise StatusMoveRefused(
            f"the events take workflow {wf.pk} to {wf.status}, its state says {status}"
        )


_WORKFLOW_COLUMNS = tuple(f.attname for f in Workflow._meta.concrete_fields)
_EVENT_COLUMNS = (
    "tenant",
    *EventRow._fields,
    "schema_version",
    "result",
    "recorded",
    "hash_format",
    "hash",
    "history_month",
)


def command_fingerprint(command: cmd.Command, actor: Actor) -> str:
    """What a request id is bound to: the command, its every field, and who sent it.
    The same id with another fingerprint is a reuse, not a duplicate."""
    content = {
        "type": command.type,
        "fields": plain(command),  # what ``dataclasses.asdict`` gives
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
    "TemplateRef",
    "WorkflowNotFound",
    "command_execute",
    "command_execute_many",
    "command_start",
    "load_state",
]
