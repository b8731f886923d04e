"""The engine's Directory, answered from the tenant's tables. One instance serves one
command; it remembers what it has looked up, user ids included, so the projections
that follow need not look the same people up again."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from . import clock
from .models import Delegation, OrgGroup, User


class TenantDirectory:
    def __init__(self, tenant_id: int) -> None:
        self.tenant_id = tenant_id
        self._managers: dict[str, str | None] = {}
        self._groups: dict[str, tuple[str, ...]] = {}
        self._ids: dict[str, int | None] = {}  # username -> id (None: no active user)
        self._delegations: dict[float, dict[str, str]] = {}

    def manager_of(self, user: str) -> str | None:
        if user not in self._managers:
            row = (
                User.objects.filter(tenant_id=self.tenant_id, username=user, is_active=True)
                .values_list("manager__username", "manager_id", "manager__is_active")
                .first()
            )
            manager = row[0] if row and row[2] else None
            self._managers[user] = manager
            if manager is not None and row is not None:
                self._ids[manager] = row[1]
        return self._managers[user]

    def members_of(self, group: str) -> Sequence[str]:
        if group not in self._groups:
            rows = (
                User.objects.filter(
                    tenant_id=self.tenant_id,
                    is_active=True,
                    org_groups__in=OrgGroup.objects.filter(tenant_id=self.tenant_id, key=group),
                )
                .order_by("username")
                .values_list("username", "id")
            )
            self._ids.update(rows)
            self._groups[group] = tuple(username for username, _ in rows)
        return self._groups[group]

    def user_exists(self, user: str) -> bool:
        return self.user_ids([user]).get(user) is not None

    def user_ids(self, usernames: Iterable[str]) -> dict[str, int]:
        """Ids of the active users named, looking up only those not seen yet."""
        wanted = set(usernames)
        missing = wanted - set(self._ids)
        if missing:
            found = dict(
                User.objects.filter(
                    tenant_id=self.tenant_id, is_active=True, username__in=missing
                ).values_list("username", "id")
            )
            for name in missing:
                self._ids[name] = found.get(name)
        return {name: pk for name in wanted if (pk := self._ids[name]) is not None}

    def delegate_for(self, user: str, at: float) -> str | None:
        # One query per command and moment: the delegations active then, for everyone.
        if at not in self._delegations:
            moment = clock.from_epoch(at)
            rows = (
                Delegation.objects.filter(
                    tenant_id=self.tenant_id,
                    starts_at__lte=moment,
                    ends_at__gt=moment,
                    delegate__is_active=True,
                )
                .order_by("starts_at")
                .values_list("user__username", "delegate__username")
            )
            # The latest-starting delegation of a user wins.
            self._delegations[at] = dict(rows)
        return self._delegations[at].get(user)
