"""The engine's Directory, answered from the tenant's tables. One instance serves one
command; it remembers what it has looked up."""

from __future__ import annotations

from collections.abc import Sequence

from . import clock
from .models import Delegation, OrgGroup, User


class TenantDirectory:
    def __init__(self, tenant_id: int) -> None:
        self.tenant_id = tenant_id
        self._managers: dict[str, str | None] = {}
        self._groups: dict[str, tuple[str, ...]] = {}
        self._users: dict[str, bool] = {}
        self._delegations: dict[float, dict[str, str]] = {}

    def manager_of(self, user: str) -> str | None:
        if user not in self._managers:
            self._managers[user] = (
                User.objects.filter(tenant_id=self.tenant_id, username=user, is_active=True)
                .values_list("manager__username", flat=True)
                .first()
            )
        return self._managers[user]

    def members_of(self, group: str) -> Sequence[str]:
        if group not in self._groups:
            self._groups[group] = tuple(
                User.objects.filter(
                    tenant_id=self.tenant_id,
                    is_active=True,
                    org_groups__in=OrgGroup.objects.filter(tenant_id=self.tenant_id, key=group),
                )
                .order_by("username")
                .values_list("username", flat=True)
            )
        return self._groups[group]

    def user_exists(self, user: str) -> bool:
        if user not in self._users:
            self._users[user] = User.objects.filter(
                tenant_id=self.tenant_id, username=user, is_active=True
            ).exists()
        return self._users[user]

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
