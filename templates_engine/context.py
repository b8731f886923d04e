"""What the decider may learn from outside: the time, randomness and the directory."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol


class Directory(Protocol):
    """Resolves approver rules. The app implements it from its tables."""

    def manager_of(self, user: str) -> str | None: ...

    def members_of(self, group: str) -> Sequence[str]: ...

    def user_exists(self, user: str) -> bool: ...

    def delegate_for(self, user: str, at: float) -> str | None:
        """The person standing in for ``user`` at time ``at``, if any."""
        ...


@dataclass(frozen=True, slots=True)
class Delegation:
    user: str
    delegate: str
    starts_at: float
    ends_at: float


@dataclass(frozen=True)
class StaticDirectory:
    """A directory held in memory, for tests and template authors."""

    managers: Mapping[str, str] = field(default_factory=dict)
    groups: Mapping[str, Sequence[str]] = field(default_factory=dict)
    users: frozenset[str] = frozenset()
    delegations: Sequence[Delegation] = ()

    def manager_of(self, user: str) -> str | None:
        return self.managers.get(user)

    def members_of(self, group: str) -> Sequence[str]:
        return tuple(self.groups.get(group, ()))

    def user_exists(self, user: str) -> bool:
        known = set(self.users) | set(self.managers) | set(self.managers.values())
        for members in self.groups.values():
            known.update(members)
        return user in known

    def delegate_for(self, user: str, at: float) -> str | None:
        for d in self.delegations:
            if d.user == user and d.starts_at <= at < d.ends_at:
                return d.delegate
        return None


@dataclass(frozen=True)
class Context:
    """Everything non-deterministic ``decide`` may use. Whatever it learns from here
    it writes into the events it returns."""

    now: float
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    directory: Directory = field(default_factory=StaticDirectory)
