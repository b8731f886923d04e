"""The engine's Directory, answered from the tenant's tables. One instance serves one
command; it remembers what it has looked up, user ids included, so the projections
that follow need not look the same people up again. Its queries run on every command,
so they are plain SQL (see runtime/store.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .. import clock
from ..models import Delegation, OrgGroup, User
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
    " ORDER BY u.username"
)
_DELEGATIONS_SQL = (
    f"SELECT u.username, d.username FROM {Delegation._meta.db_table} x"
    f" JOIN {_USERS} u ON u.id = x.user_id JOIN {_USERS} d ON d.id = x.delegate_id"
    " WHERE x.tenant_id = %s AND x.starts_at <= %s AND x.ends_at > %s AND d.is_active"
    " ORDER BY x.starts_at"
)


class TenantDirectory:
    def __init__(self, tenant_id: int) -> None:
        self.tenant_id = tenant_id
        self._managers: dict[str, str | None] = {}
        self._groups: dict[str, tuple[str, ...]] = {}
        self._ids: dict[str, int | None] = {}  # username -> id (None: no active user)
        self._delegations: dict[float, dict[str, str]] = {}

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
        # One query per command and moment: the delegations active then, for everyone.
        if at not in self._delegations:
            moment = store.param(Delegation, "starts_at", clock.from_epoch(at))
            rows = store.fetch(_DELEGATIONS_SQL, [self.tenant_id, moment, moment])
            # The latest-starting delegation of a user wins.
            self._delegations[at] = dict(rows)
        return self._delegations[at].get(user)
