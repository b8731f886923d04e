from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ActivityFn = Callable[[str, dict[str, Any]], Any]


@dataclass(frozen=True)
class Activity:
    name: str
    queue: str
    fn: ActivityFn


REGISTRY: dict[str, Activity] = {}


def activity(name: str, *, queue: str = "default") -> Callable[[ActivityFn], ActivityFn]:
    """Register ``fn`` as the activity ``name`` on ``queue`` (a step may override it)."""

    def register(fn: ActivityFn) -> ActivityFn:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"activity {name!r} is registered twice")
        REGISTRY[name] = Activity(name, queue, fn)
        return fn

    return register


def get_activity(name: str) -> Activity | None:
    _load_builtin()
    return REGISTRY.get(name)


def _load_builtin() -> None:
    from . import builtin  # noqa: F401  (registers on import)
