from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ActivityFn = Callable[..., Any]


class NonRetryableError(Exception):
    """Raise (or subclass) when trying again cannot help: the step fails for good."""

    retryable = False


@dataclass(frozen=True)
class Activity:
    name: str
    queue: str
    fn: ActivityFn
    takes_params: bool

    def __call__(self, key: str, data: dict[str, Any], params: Mapping[str, Any]) -> Any:
        if self.takes_params:
            return self.fn(key, data, params=dict(params))
        return self.fn(key, data)


REGISTRY: dict[str, Activity] = {}


def activity(name: str, *, queue: str = "default") -> Callable[[ActivityFn], ActivityFn]:
    """Register ``fn(key, data)`` (or ``fn(key, data, *, params)``, to receive the step's
    ``params``) as the activity ``name`` on ``queue``; a step may override the queue."""

    def register(fn: ActivityFn) -> ActivityFn:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"activity {name!r} is registered twice")
        takes_params = "params" in inspect.signature(fn).parameters
        REGISTRY[name] = Activity(name, queue, fn, takes_params)
        return fn

    return register


def activity_names() -> list[str]:
    """Every registered activity, by name: what a definition may name."""
    _load_builtin()
    return sorted(REGISTRY)


def get_activity(name: str) -> Activity | None:
    _load_builtin()
    return REGISTRY.get(name)


def _load_builtin() -> None:
    from . import builtin, http  # noqa: F401  (they register on import)
