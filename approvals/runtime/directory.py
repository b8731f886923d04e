"""The engine's Directory, answered from the tenant's tables.

It remembers what it has looked up (managers, group members, user ids, delegations,
contact details), so the projections that follow need not look the same people up
again. Given the directory version a command read in its transaction
(``DirectoryVersion``, bumped by the database on every change to people, groups,
memberships, delegations and mail preferences), it also keeps those answers for the
next commands of this process, for as long as the version stays the same: a command
on a known workflow then asks the directory nothing. A version read before a change
commits can meet answers looked up after it, never the other way round, so a cached
answer is never older than the version it is filed under. Its queries are plain SQL
(see runtime/store.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import Group

from .. import clock
from ..models import Delegation, DirectoryVersion, OrgGroup, User, time_bounds
from ..models.directory import AUDITOR_ROLE, INTEGRATION_ROLE
from ..notifications.models import NotificationPreference
from . import store

_USERS = User._meta.db_table
_MANAGER_SQL = (
    f"SELECT m.username, m.id FROM {_USERS} u JOIN {_USERS} m ON m.id = u.manager_id"
    # The person need not be active: escalating from someone who has left still finds
    # the manager they had. The manager must be active.
    " WHERE u.tenant_id = %s AND u.username = %s AND m.is_active"
)
_MEMBERS_SQL = (
    f"SELECT u.username, u.id FROM {_USERS} u"
    f" JOIN {OrgGroup.members.through._meta.db_table} gm ON gm.user_id = u.id"
    f" JOIN {OrgGroup._meta.db_table} g ON g.id = gm.orggroup_id"
    " WHERE g.tenant_id = %s AND g.key = %s AND u.tenant_id = %s AND u.is_active"
    # members who may never act on a task (access.task_holder_refusal) are not asked
    f" AND NOT EXISTS (SELECT 1 FROM {User.groups.through._meta.db_table} ug"
    f"  JOIN {Group._meta.db_table} r ON r.id = ug.group_id WHERE ug.user_id = u.id"
    f"  AND (r.name = '{INTEGRATION_ROLE}' OR (r.name = '{AUDITOR_ROLE}' AND NOT u.is_superuser)))"
    " ORDER BY u.username"
)
# Every delegation that has not ended (an hour's margin for a command whose clock reads
# a little behind the one that loaded them); which apply is decided per moment. The
# times come as seconds since 1970, which any stored time has: a BC or year-10000 time
# read as a timestamp would fail the whole load, and with it every command that assigns
# people (such a row is skipped and logged instead).
_DELEGATIONS_SQL = (
    "SELECT u.username, d.username, EXTRACT(EPOCH FROM x.starts_at),"
    f" EXTRACT(EPOCH FROM x.ends_at) FROM {Delegation._meta.db_table} x"
    f" JOIN {_USERS} u ON u.id = x.user_id JOIN {_USERS} d ON d.id = x.delegate_id"
    " WHERE x.tenant_id = %s AND x.ends_at > %s AND d.is_active"
    " ORDER BY x.starts_at"
)
_CONTACTS_SQL = (
    "SELECT u.username, u.id, u.email, u.first_name, u.last_name, u.is_active, p.mode,"
    " u.time_zone"
    f" FROM {_USERS} u LEFT JOIN {NotificationPreference._meta.db_table} p ON p.user_id = u.id"
    " WHERE u.tenant_id = %s AND u.username IN ({marks})"
)
logger = logging.getLogger(__name__)
# The directory's version: read beside a command's first statement (the lock, or the
# start's subject check) as this scalar subquery, so it costs no statement of its own.
VERSION_SUBQUERY = f"(SELECT version FROM {DirectoryVersion._meta.db_table} WHERE id = 1)"
VERSION_SQL = f"SELECT {VERSION_SUBQUERY}"


@dataclass(frozen=True)
class Contact:
    """What a mail needs of a person."""

    id: int
    username: str
    email: str
    first_name: str
    last_name: str
    is_active: bool
    mode: str | None  # their notification preference; None: the default
    time_zone: str  # the zone they chose; "": none

    @property
    def pk(self) -> int:
        return self.id

    def get_full_name(self) -> str:
        return f"{self.first_name} {self.last_name}".strip()


class _Known:
    """The answers looked up under one directory version."""

    def __init__(self) -> None:
        self.managers: dict[str, str | None] = {}
        self.groups: dict[str, tuple[str, ...]] = {}
        self.ids: dict[str, int | None] = {}  # username -> id (None: no active user)
        self.delegations: list[tuple[str, str, float, float]] | None = None
        self.contacts: dict[str, Contact | None] = {}


# tenant -> (directory version, what is known under it); one entry per tenant.
_shared: dict[int, tuple[int, _Known]] = {}


class TenantDirectory:
    def __init__(self, tenant_id: int, version: int | None = None) -> None:
        """With the ``version`` read in the command's transaction, answers are shared
        with every command of this process that read the same version; without, they
        last for this instance only."""
        self.tenant_id = tenant_id
        self.version = version
        if version is None:
            known = _Known()
        else:
            cached = _shared.get(tenant_id)
            if cached is None or cached[0] != version:
                cached = (version, _Known())
                _shared[tenant_id] = cached
            known = cached[1]
        self._known = known
        self._managers = known.managers
        self._groups = known.groups
        self._ids = known.ids

    def manager_of(self, user: str) -> str | None:
        if user not in self._managers:
            rows = store.fetch(_MANAGER_SQL, [self.tenant_id, user])
            self._managers[user] = rows[0][0] if rows else None
            self._ids.update(rows)
        return self._managers[user]

    def members_of(self, group: str) -> Sequence[str]:
        if group not in self._groups:
            rows = store.fetch(_MEMBERS_SQL, [self.tenant_id, group, self.tenant_id])
            self._ids.update(rows)
            self._groups[group] = tuple(username for username, _ in rows)
        return self._groups[group]

    def user_exists(self, user: str) -> bool:
        return self.user_ids([user]).get(user) is not None

    def user_ids(self, usernames: Iterable[str]) -> dict[str, int]:
        """Ids of the active users named, looking up only those not seen yet."""
        wanted = set(usernames)
        missing = sorted(wanted - set(self._ids))
        if missing:
            marks = ", ".join(["%s"] * len(missing))
            found = dict(
                store.fetch(
                    f"SELECT username, id FROM {_USERS}"
                    f" WHERE tenant_id = %s AND is_active AND username IN ({marks})",
                    [self.tenant_id, *missing],
                )
            )
            for name in missing:
                self._ids[name] = found.get(name)
        return {name: pk for name in wanted if (pk := self._ids[name]) is not None}

    def user_ids_any(self, usernames: Iterable[str]) -> dict[str, int]:
        """Ids of the people named, deactivated ones included: a task leaving someone
        who has just been deactivated must still find its row."""
        wanted = set(usernames)
        found = self.user_ids(wanted)
        missing = sorted(wanted - set(found))
        if missing:
            marks = ", ".join(["%s"] * len(missing))
            found.update(
                store.fetch(
                    f"SELECT username, id FROM {_USERS}"
                    f" WHERE tenant_id = %s AND username IN ({marks})",
                    [self.tenant_id, *missing],
                )
            )
        return found

    def delegate_for(self, user: str, at: float) -> str | None:
        known = self._known
        if known.delegations is None:
            since = store.param(Delegation, "ends_at", clock.from_epoch(at - 3600))
            known.delegations = []
            for absent, delegate, starts, ends in store.fetch(
                _DELEGATIONS_SQL, [self.tenant_id, since]
            ):
                span = _span(starts, ends)
                if span is None:
                    logger.warning(
                        "Skipped the out-of-office of %s (to %s) in tenant %s: its times are "
                        "outside 1970..2200 (see the attention page).",
                        absent,
                        delegate,
                        self.tenant_id,
                    )
                    continue
                known.delegations.append((absent, delegate, *span))
        # Rows come by start; the latest-starting delegation active at ``at`` wins.
        found = None
        for absent, delegate, starts, ends in known.delegations:
            if absent == user and starts <= at < ends:
                found = delegate
        return found

    def contacts(self, usernames: Iterable[str]) -> dict[str, Contact]:
        """Mail details of the people named (active or not), looking up only those not
        seen yet."""
        known = self._known.contacts
        missing = sorted(set(usernames) - set(known))
        if missing:
            marks = ", ".join(["%s"] * len(missing))
            rows = store.fetch(_CONTACTS_SQL.format(marks=marks), [self.tenant_id, *missing])
            found = {
                name: Contact(pk, name, email or "", first, last, bool(active), mode, zone or "")
                for name, pk, email, first, last, active, mode, zone in rows
            }
            for name in missing:
                known[name] = found.get(name)
        return {name: c for name in usernames if (c := known.get(name)) is not None}


def _span(starts: Any, ends: Any) -> tuple[float, float] | None:
    """A delegation's times as seconds since 1970, or None when either cannot be read
    or lies outside the range the database's constraint holds them to."""
    try:
        span = (_epoch(starts), _epoch(ends))
    except (ValueError, TypeError, OverflowError):
        return None
    return span if all(time_bounds.epoch_in_range(t) for t in span) else None


def _epoch(value: Decimal | float) -> float:
    return float(value)
