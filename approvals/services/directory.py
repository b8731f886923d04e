"""Changes to the organisation's directory: people who leave, managers and groups.

When someone is deactivated (they leave), each task they hold is handed on at once:

* held as a member of an approver group, it goes back to the group: the leaver drops
  out and the group's other members who hold it and may act on it keep it;
* held by a delegate on behalf of someone, it goes back to that person;
* held as a named approver or as manager (or when neither of the above can take it),
  it goes to their manager (the first active one up the chain), else to the
  organisation's fallback approver;

unless the admin picks a person for it. Delegations to and from them end. Each move is
one ``Reassign`` of the leaver (``TaskReassigned`` events of reason ``handed_on``, one
per receiver) through the one command path, with the reason. It all
happens in one transaction that holds the person's row: a decision racing it waits on
the workflow's lock and then either finds its task already moved (refused) or was
recorded before the move (and the task is no longer theirs to move). When nobody can
take a task (no manager, no fallback approver, or segregation of duties rules them
out), the deactivation is refused and nothing changes.

Managers and groups are read when a step assigns its approvers, so a change applies to
tasks assigned after it; tasks already assigned stay where they are.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Q

from templates_engine import CommandRejected
from templates_engine import commands as cmd
from templates_engine import errors as engine_errors
from templates_engine.segregation import SUBMITTER, exclusion
from templates_engine.steps.approval import ApprovalStep

from .. import access, clock, json_input
from ..definitions import definition_for
from ..models import Delegation, OrgGroup, PendingTask, Tenant, User, Workflow
from ..runtime import tenant_scope
from ..runtime.commands import SYSTEM, Actor, command_execute, load_state
from ..words.steps import step_title

log = logging.getLogger(__name__)

ALREADY_INACTIVE = "{user} is already deactivated."
NOBODY_TO_TAKE = (
    "{user} cannot be deactivated: nobody can take their task on step {step!r} of workflow "
    "{workflow} ({why}). Give them an active manager or set the organisation's fallback "
    "approver, then try again."
)
NO_CANDIDATES = "no active manager and no fallback approver"
HANDOVER_COMMENT = "{user} was deactivated: {reason}"
DEFAULT_REASON = "left the organisation"
# Codes meaning "this person cannot take the task; try the next one".
_TRY_NEXT = {engine_errors.SEGREGATION_OF_DUTIES, engine_errors.UNKNOWN_USER}
# Enough passes to catch a task assigned to the person while the first pass ran.
_MAX_PASSES = 5


class DeactivationRefused(Exception):
    pass


CHOICE_IS_LEAVER = "{name} is the person leaving: choose someone else."
CHOICE_IS_SUBMITTER = (
    "{name} submitted this request, and nobody decides a step of their own request: "
    "choose someone else."
)
CHOICE_APPROVED_BEFORE = (
    "{name} already approved its {step} step, and one person may not approve two steps "
    "of it: choose someone else."
)


# Why a task went where it went (Handover.kind, PlannedMove.kind).
GROUP = "group"  # back to the other members of the approver group who hold it
PRINCIPAL = "principal"  # back to the person a delegate held it for
NAMED = "named"  # held as a named approver or manager: to the manager (or fallback)
CHOSEN = "chosen"  # to the person the admin picked


@dataclass(frozen=True)
class PlannedMove:
    """Where one open task of a leaver would go; ``to_users`` empty: nobody can take it."""

    workflow_id: uuid.UUID
    step: str
    kind: str
    to_users: tuple[str, ...]


@dataclass(frozen=True)
class Handover:
    workflow_id: uuid.UUID
    step: str
    to_user: str | None  # None: the task was decided meanwhile, nothing to move
    also_to: tuple[str, ...] = ()  # the group's other members who took it back too
    kind: str = NAMED

    @property
    def receivers(self) -> tuple[str, ...]:
        return (self.to_user, *self.also_to) if self.to_user is not None else ()


@dataclass(frozen=True)
class DeactivationResult:
    username: str
    handovers: list[Handover] = field(default_factory=list)

    @property
    def moved(self) -> list[Handover]:
        return [h for h in self.handovers if h.to_user is not None]


def user_deactivate(
    *,
    user: User,
    by: User | None,
    reason: str = "",
    choices: Mapping[uuid.UUID, str] | None = None,
) -> DeactivationResult:
    """Deactivate ``user`` and hand each of their open tasks on; see the module doc.

    ``by`` is who does it (None: the directory sync), recorded as the actor of each
    move. ``choices`` (workflow id -> username) overrides where a task goes. Their
    delegations, to and from them, end. Their API tokens are revoked on the save
    (services.tokens) and their e-mailed links stop working (notifications.links reads
    the active flag). Raises DeactivationRefused, changing nothing, when a task has
    nobody to take it.
    """
    with tenant_scope.atomic_for(user):
        # FOR NO KEY UPDATE: it serialises two deactivations of one person, yet lets a
        # racing decision (whose event row references the person: KEY SHARE) go on to
        # the workflow's lock, where the two are ordered; FOR UPDATE would deadlock.
        person = User.objects.select_for_update(no_key=True).get(pk=user.pk)
        if not person.is_active:
            raise DeactivationRefused(ALREADY_INACTIVE.format(user=person.username))
        person.is_active = False
        person.save(update_fields=["is_active"])
        _end_delegations(person)
        handovers = list(_hand_on_tasks(person, by, reason or DEFAULT_REASON, choices))
    user.is_active = False
    return DeactivationResult(person.username, handovers)


USER_NOT_FOUND = "No person {username!r} in your organisation."


class UserNotFound(Exception):
    pass


def user_deactivate_by_name(
    *,
    by: User,
    username: str,
    reason: str = "",
    choices: Mapping[uuid.UUID, str] | None = None,
) -> DeactivationResult:
    """An organisation admin deactivates someone of their organisation by user name.
    Raises UserNotFound (also for another organisation's people), access.Forbidden,
    or DeactivationRefused. Whether ``by`` may deactivate anyone is asked first, so a
    refusal does not tell which colleagues exist."""
    if not access.may_deactivate_people(by):
        raise access.Forbidden(access.FORBIDDEN_DEACTIVATE)
    name_field = User._meta.get_field("username")
    if "\x00" in username or len(username) > (name_field.max_length or 150):
        raise UserNotFound(USER_NOT_FOUND.format(username=username))  # no such name can exist
    person = User.objects.filter(tenant_id=by.member_tenant_id, username=username).first()
    if person is None:
        raise UserNotFound(USER_NOT_FOUND.format(username=username))
    refusal = access.deactivation_refusal(by, person)
    if refusal is not None:
        raise access.Forbidden(refusal)
    return user_deactivate(user=person, by=by, reason=reason, choices=choices)


def handover_summary(result: DeactivationResult) -> str:
    """``Deactivated bob; 2 open tasks handed on to victor.``"""
    takers: dict[str, int] = {}
    for h in result.moved:
        who = " and ".join(h.receivers)
        takers[who] = takers.get(who, 0) + 1
    if not takers:
        return f"Deactivated {result.username}; they held no open task."
    parts = [
        f"{n} open task{'s' if n != 1 else ''} handed on to {who}" for who, n in takers.items()
    ]
    return f"Deactivated {result.username}; " + ", ".join(parts) + "."


def takers_for(person: User) -> list[User]:
    """Who takes ``person``'s tasks, in order of preference: the first active manager
    up the chain, then the organisation's fallback approver."""
    takers: list[User] = []
    seen = {person.pk}
    manager = person.manager
    while manager is not None and manager.pk not in seen:
        if manager.is_active and manager.tenant_id == person.tenant_id:
            takers.append(manager)
            break
        seen.add(manager.pk)
        manager = manager.manager
    tenant = (
        Tenant.objects.filter(pk=person.member_tenant_id)
        .select_related("fallback_approver")
        .first()
    )
    fallback = tenant.fallback_approver if tenant is not None else None
    taken = seen | {t.pk for t in takers}
    if fallback is not None and fallback.is_active and fallback.pk not in taken:
        takers.append(fallback)
    return takers


def _open_tasks_of(person: User, done: set[tuple[uuid.UUID, str]]) -> list[tuple[uuid.UUID, str]]:
    return [
        (wid, step)
        for wid, step in PendingTask.objects.filter(
            tenant_id=person.member_tenant_id, assignee=person
        )
        .order_by("workflow_id")
        .values_list("workflow_id", "step")
        if (wid, step) not in done
    ]


def offboarding_plan(*, person: User) -> list[PlannedMove]:
    """Where each of ``person``'s open tasks would go if they left now, by the rules of
    the module doc (group, principal, manager). Reads only: a preview changes nothing."""
    takers = takers_for(person)
    return [_plan_task(person, wid, step, takers) for wid, step in _open_tasks_of(person, set())]


def offboarding_choice_refusal(
    *, person: User, workflow_id: uuid.UUID, step: str, chosen: User
) -> str | None:
    """Why ``chosen`` may not take ``person``'s task on ``step`` of the workflow, in
    words the admin reads before confirming (the rules the engine applies on confirm:
    who may hold tasks at all, then segregation of duties), or None when they may."""
    name = chosen.get_full_name() or chosen.username
    if chosen.pk == person.pk:
        return CHOICE_IS_LEAVER.format(name=name)
    refusal = access.task_holder_refusal(chosen)
    if refusal is not None:
        return refusal
    wf = Workflow.objects.filter(pk=workflow_id).select_related("template").first()
    if wf is None:
        return None
    definition = definition_for(wf.template_id)
    reason = exclusion(
        load_state(wf, definition), chosen.username, step, distinct=definition.distinct_approvers
    )
    if reason is None:
        return None
    if reason == SUBMITTER:
        return CHOICE_IS_SUBMITTER.format(name=name)
    other = reason.removeprefix("already approved ")
    return CHOICE_APPROVED_BEFORE.format(
        name=name, step=step_title(wf.template.definition or {}, other)
    )


def _plan_task(person: User, workflow_id: uuid.UUID, step: str, takers: list[User]) -> PlannedMove:
    """Where one task of ``person`` goes: back to the principal a delegate held it for;
    to the group's other members who hold it and can act on it; else to the first of
    ``takers`` segregation of duties lets take it (none: ``to_users`` is empty)."""
    wf = Workflow.objects.filter(pk=workflow_id).first()
    if wf is None:
        return PlannedMove(workflow_id, step, NAMED, ())
    definition = definition_for(wf.template_id)
    state = load_state(wf, definition)
    me = person.username
    open_now = state.outstanding() if state.step == step else ()
    mine = [a for a in open_now if a.user == me]
    assert person.tenant_id is not None
    active = set(
        User.objects.filter(
            tenant_id=person.tenant_id,
            is_active=True,
            username__in={a.user for a in open_now}
            | {a.on_behalf_of for a in mine if a.on_behalf_of},
        ).values_list("username", flat=True)
    )

    def can_act(user: str) -> bool:
        return exclusion(state, user, step, distinct=definition.distinct_approvers) is None

    for a in mine:
        principal = a.on_behalf_of
        if principal and principal != me and principal in active and can_act(principal):
            return PlannedMove(workflow_id, step, PRINCIPAL, (principal,))
    step_def = definition.step(step) if mine else None
    slots = {a.slot for a in mine}
    if (
        isinstance(step_def, ApprovalStep)
        and slots
        and all(
            s < len(step_def.approvers) and step_def.approvers[s].kind == "group" for s in slots
        )
    ):
        mates = {
            a.user
            for a in open_now
            if a.slot in slots and a.user != me and a.user in active and can_act(a.user)
        }
        covered = all(any(a.slot == s and a.user in mates for a in open_now) for s in slots)
        holders = {a.user for a in open_now if a.user != me}
        enough = state.mode != "quorum" or len(holders) + len(state.approvals) >= state.required
        if mates and covered and enough:
            return PlannedMove(workflow_id, step, GROUP, tuple(sorted(mates)))
    eligible = [t.username for t in takers if can_act(t.username)]
    return PlannedMove(workflow_id, step, NAMED, tuple(eligible[:1]))


def _hand_on_tasks(
    person: User,
    by: User | None,
    reason: str,
    choices: Mapping[uuid.UUID, str] | None = None,
) -> Iterator[Handover]:
    assert person.tenant_id is not None
    takers = takers_for(person)
    actor = Actor(by, "admin") if by is not None else SYSTEM
    comment = HANDOVER_COMMENT.format(user=person.username, reason=reason)
    done: set[tuple[uuid.UUID, str]] = set()
    for _ in range(_MAX_PASSES):
        tasks = _open_tasks_of(person, done)
        if not tasks:
            return
        for wid, step in tasks:
            done.add((wid, step))
            chosen = (choices or {}).get(wid)
            candidates: list[tuple[str, ...]]
            if chosen:
                kind, candidates = CHOSEN, [(chosen,)]
            else:
                move = _plan_task(person, wid, step, takers)
                kind = move.kind
                named = [(t.username,) for t in takers]
                candidates = list(named) if kind == NAMED else [move.to_users]
            moved = _hand_on(person, wid, step, candidates, actor, comment)
            yield Handover(wid, step, moved[0] if moved else None, moved[1:] if moved else (), kind)


def _hand_on(
    person: User,
    workflow_id: uuid.UUID,
    step: str,
    candidates: list[tuple[str, ...]],
    actor: Actor,
    comment: str,
) -> tuple[str, ...] | None:
    """Hand one task on to the first candidates the engine accepts (one Reassign of the
    leaver: several receivers when a group's members take it back); who took it, or
    None when the task was no longer ``person``'s (decided or moved meanwhile)."""
    assert person.tenant_id is not None
    refusals: list[str] = []
    for receivers in candidates:
        command = cmd.Reassign(
            actor.user.username if actor.user is not None else None,
            person.username,
            receivers[0],
            comment,
            left=True,
            also_to=receivers[1:],
        )
        try:
            command_execute(
                tenant_id=person.tenant_id,
                workflow_id=workflow_id,
                command=command,
                actor=actor,
            )
        except CommandRejected as exc:
            if exc.code in _TRY_NEXT:
                refusals.append(f"{', '.join(receivers)}: {exc.message}")
                continue
            if exc.code in (engine_errors.NOT_YOUR_STEP, engine_errors.WORKFLOW_FINISHED):
                return None
            raise
        return receivers
    raise DeactivationRefused(
        NOBODY_TO_TAKE.format(
            user=person.username,
            step=step,
            workflow=workflow_id,
            why="; ".join(refusals) or NO_CANDIDATES,
        )
    )


def _end_delegations(person: User) -> None:
    """Delegations to and from ``person`` end now; those not begun are dropped."""
    now = clock.now()
    theirs = Delegation.objects.filter(Q(user=person) | Q(delegate=person), ends_at__gt=now)
    theirs.filter(starts_at__gte=now).delete()
    theirs.filter(starts_at__lt=now).update(ends_at=now)


def open_tasks_of_inactive(*, tenant_id: int | None = None) -> list[tuple[int, uuid.UUID]]:
    """(user id, workflow id) of tasks still held by deactivated people: none, unless a
    command assigned one while the person was being deactivated."""
    qs = PendingTask.objects.filter(assignee__is_active=False)
    if tenant_id is not None:
        qs = qs.filter(tenant_id=tenant_id)
    return list(qs.values_list("assignee_id", "workflow_id"))


def stragglers_hand_on(*, tenant_id: int | None = None) -> int:
    """Hand on the tasks a deactivated person was given while being deactivated (a
    command that read them as active just before); returns how many moved."""
    moved = 0
    for user_id in sorted({uid for uid, _ in open_tasks_of_inactive(tenant_id=tenant_id)}):
        try:
            with transaction.atomic():
                locked = User.objects.select_for_update(no_key=True).get(pk=user_id)
                hand = _hand_on_tasks(locked, None, DEFAULT_REASON)
                moved += sum(1 for h in hand if h.to_user is not None)
        except DeactivationRefused as exc:
            # Nobody can take them: left where they are (overdue, they reach the
            # attention page) until a manager or fallback approver is set.
            log.error("%s", exc)
    return moved


# -- the directory sync -------------------------------------------------------------

SYNC_COLUMNS = ("username", "email", "first_name", "last_name", "manager", "groups", "active")
BAD_FORMAT = "{where}: {problem}"
NOT_A_LIST = "a JSON directory export is a list of people, or an object with a list 'users'"
NO_USERNAME = "no username"
DUPLICATE_USERNAME = "{username!r} appears twice"
UNKNOWN_MANAGER = "manager {manager!r} is neither in the file nor in the organisation"
OWN_MANAGER = "{username!r} cannot be their own manager"
BAD_ACTIVE = "active must be true or false, not {value!r}"
BAD_GROUP = "group key {key!r} must be letters, digits, '-' or '_'"
OTHER_TENANT = "{username!r} belongs to another organisation"
TOO_LONG = "{field} is longer than {limit} characters"
NUL_IN_TEXT = "holds a NUL character, which no name or address may hold"
BAD_GROUPS = "groups must be a list of group keys, or keys separated by ';'"
UNREADABLE_CSV = "cannot be read as CSV: {problem}"
# The columns' lengths: a longer value would be a database error, not a sentence.
_LIMITS = {
    name: getattr(User._meta.get_field(name), "max_length", None) or 150
    for name in ("username", "email", "first_name", "last_name")
}
_TRUE = {"true", "1", "yes", "y"}
_FALSE = {"false", "0", "no", "n"}


class DirectoryInvalid(ValueError):
    pass


@dataclass(frozen=True)
class DirectoryEntry:
    username: str
    email: str = ""
    first_name: str = ""
    last_name: str = ""
    manager: str = ""
    groups: tuple[str, ...] = ()
    active: bool = True


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deactivated: list[DeactivationResult] = field(default_factory=list)
    reactivated: list[str] = field(default_factory=list)


def directory_parse(text: str, *, fmt: str) -> list[DirectoryEntry]:
    """The people of a CSV (a header row naming ``SYNC_COLUMNS``; groups separated by
    ``;``) or JSON export. Raises DirectoryInvalid naming the row and the problem."""
    if fmt == "json":
        try:  # within json_input's limits: its depth, no NUL, no lone surrogate
            doc = json_input.loads(text)
        except json_input.JsonInputError as exc:
            raise DirectoryInvalid(f"{exc.path}: {exc.problem}") from exc
        except json.JSONDecodeError as exc:
            raise DirectoryInvalid(f"not valid JSON: {exc}") from exc
        items = doc.get("users") if isinstance(doc, dict) else doc
        if not isinstance(items, list):
            raise DirectoryInvalid(NOT_A_LIST)
        rows = [(f"entry {i + 1}", item) for i, item in enumerate(items)]
    else:
        reader = csv.DictReader(io.StringIO(text))
        rows = []
        try:
            for i, item in enumerate(reader):
                rows.append((f"line {i + 2}", item))
        except csv.Error as exc:  # a field past the csv module's limit, a NUL, ...
            where = f"line {reader.line_num + 1}"  # the line it could not finish
            problem = UNREADABLE_CSV.format(problem=exc)
            raise DirectoryInvalid(BAD_FORMAT.format(where=where, problem=problem)) from exc
    entries = [_entry(where, item) for where, item in rows]
    _check_entries(entries)
    return entries


def _entry(where: str, item: Any) -> DirectoryEntry:
    def fail(problem: str) -> DirectoryInvalid:
        return DirectoryInvalid(BAD_FORMAT.format(where=where, problem=problem))

    if not isinstance(item, dict):
        raise fail("not an object")
    username = str(item.get("username") or "").strip()
    if not username:
        raise fail(NO_USERNAME)
    texts = {name: str(item.get(name) or "") for name in (*_LIMITS, "manager")}
    for name, value in texts.items():
        if "\x00" in value:
            raise fail(f"{name} {NUL_IN_TEXT}")
        limit = _LIMITS.get(name, _LIMITS["username"])
        if len(value.strip() if name in ("username", "manager") else value) > limit:
            raise fail(TOO_LONG.format(field=name, limit=limit))
    groups = item.get("groups") or ()
    if isinstance(groups, str):
        groups = [g for g in (part.strip() for part in groups.split(";")) if g]
    if not isinstance(groups, list | tuple):
        raise fail(BAD_GROUPS)
    for key in groups:
        if not isinstance(key, str) or not re.fullmatch(r"[-a-zA-Z0-9_]{1,64}", key):
            raise fail(BAD_GROUP.format(key=key))
    active = item.get("active", True)
    if isinstance(active, str):
        if active.strip().lower() not in _TRUE | _FALSE:
            raise fail(BAD_ACTIVE.format(value=active))
        active = active.strip().lower() in _TRUE
    if not isinstance(active, bool):
        raise fail(BAD_ACTIVE.format(value=active))
    manager = str(item.get("manager") or "").strip()
    if manager == username:
        raise fail(OWN_MANAGER.format(username=username))
    return DirectoryEntry(
        username=username,
        email=str(item.get("email") or ""),
        first_name=str(item.get("first_name") or ""),
        last_name=str(item.get("last_name") or ""),
        manager=manager,
        groups=tuple(groups),
        active=active,
    )


def _check_entries(entries: list[DirectoryEntry]) -> None:
    seen: set[str] = set()
    for e in entries:
        if e.username in seen:
            raise DirectoryInvalid(DUPLICATE_USERNAME.format(username=e.username))
        seen.add(e.username)


def directory_sync(
    *, tenant: Tenant, entries: list[DirectoryEntry], by: User | None = None
) -> SyncReport:
    """Bring the organisation's people in line with a directory export: create and
    update people, set managers and group memberships, reactivate, and deactivate
    (handing their tasks on). All or nothing: any problem changes nothing."""
    report = SyncReport()
    with transaction.atomic():
        # A user name is unique across organisations: asked on the login role, before
        # the rest acts for the organisation and sees its own people only.
        _check_names_free(tenant, entries)
        with tenant_scope.acting_for(tenant.pk):
            _sync(tenant, entries, by, report)
    return report


def _check_names_free(tenant: Tenant, entries: list[DirectoryEntry]) -> None:
    names = [e.username for e in entries]
    taken = set(
        User.objects.filter(username__in=names)
        .exclude(tenant=tenant)
        .values_list("username", flat=True)
    )
    for name in names:
        if name in taken:
            raise DirectoryInvalid(OTHER_TENANT.format(username=name))


def _sync(
    tenant: Tenant, entries: list[DirectoryEntry], by: User | None, report: SyncReport
) -> None:
    people = _upsert_people(tenant, entries, report)
    for e in entries:
        person = people[e.username]
        manager_id = people[e.manager].pk if e.manager else None
        if person.manager_id != manager_id:
            User.objects.filter(pk=person.pk).update(manager_id=manager_id)
            person.manager_id = manager_id
    _set_groups(tenant, entries, people)
    for e in entries:
        person = people[e.username]
        if e.active and not person.is_active:
            person.is_active = True
            person.save(update_fields=["is_active"])
            report.reactivated.append(person.username)
    for e in entries:
        person = User.objects.get(pk=people[e.username].pk)
        if not e.active and person.is_active:
            if not access.may_deactivate(by, person):
                raise DirectoryInvalid(
                    access.SUPERUSER_NOT_DEACTIVATED.format(username=person.username)
                    if person.is_superuser
                    else access.FORBIDDEN_DEACTIVATE
                )
            report.deactivated.append(user_deactivate(user=person, by=by))


def _upsert_people(
    tenant: Tenant, entries: list[DirectoryEntry], report: SyncReport
) -> dict[str, User]:
    names = {e.username for e in entries} | {e.manager for e in entries if e.manager}
    existing = {u.username: u for u in User.objects.filter(username__in=names)}
    people: dict[str, User] = {}
    for e in entries:
        person = existing.get(e.username)
        if person is not None and person.tenant_id != tenant.pk:
            raise DirectoryInvalid(OTHER_TENANT.format(username=e.username))
        if person is None:
            person = User(username=e.username, tenant=tenant, is_active=e.active)
            person.set_unusable_password()
            report.created.append(e.username)
        elif (person.email, person.first_name, person.last_name) != (
            e.email,
            e.first_name,
            e.last_name,
        ):
            report.updated.append(e.username)
        person.email, person.first_name, person.last_name = e.email, e.first_name, e.last_name
        if person.pk is None:
            person.save()
        else:
            person.save(update_fields=["email", "first_name", "last_name"])
        people[e.username] = person
    for e in entries:
        if not e.manager or e.manager in people:
            continue
        manager = existing.get(e.manager)
        if manager is None or manager.tenant_id != tenant.pk:
            raise DirectoryInvalid(UNKNOWN_MANAGER.format(manager=e.manager))
        people[e.manager] = manager
    return people


def _set_groups(tenant: Tenant, entries: list[DirectoryEntry], people: dict[str, User]) -> None:
    """Each listed person's approver groups become exactly those the file names."""
    keys = sorted({k for e in entries for k in e.groups})
    groups = {g.key: g for g in OrgGroup.objects.filter(tenant=tenant, key__in=keys)}
    for key in keys:
        if key not in groups:
            groups[key] = OrgGroup.objects.create(tenant=tenant, key=key, name=key)
    for e in entries:
        person = people[e.username]
        wanted = [groups[k] for k in e.groups]
        current = OrgGroup.objects.filter(tenant=tenant, members=person)
        person.org_groups.remove(*[g for g in current if g.key not in e.groups])
        person.org_groups.add(*wanted)
