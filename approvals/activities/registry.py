from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

ActivityFn = Callable[..., Any]


class NonRetryableError(Exception):
    """Raise (or subclass) when trying again cannot help: the step fails for good."""

    retryable = False


class AttemptAbandoned(Exception):
    """Raised by ``ActivityContext.heartbeat`` when the workflow no longer waits for
    this attempt (it timed out, the workflow was cancelled): stop, nothing is recorded."""


@dataclass
class ActivityContext:
    """What an activity that takes ``context`` is given: which attempt it is, the last
    heartbeat details of the attempt before (None on a first attempt or when it gave
    none), and ``heartbeat`` to say it is alive.

    Heartbeats are sent at most once per ``min_interval`` seconds (each one is an event
    in the workflow's history); the details of a skipped beat are sent with the next."""

    attempt: int
    round: int
    heartbeat_details: Any
    send: Callable[[Any], bool]
    min_interval: float = 0.0
    # The organisation the workflow belongs to (what it may call: http_request).
    tenant_id: int | None = None
    _last_sent: float | None = field(default=None, repr=False)

    def heartbeat(self, details: Any = None) -> None:
        """Say the attempt is alive, with optional JSON ``details`` of its progress that
        the next attempt gets if this one fails. Raises AttemptAbandoned when the
        workflow has stopped waiting for this attempt."""
        now = time.monotonic()
        if self._last_sent is not None and now - self._last_sent < self.min_interval:
            return
        self._last_sent = now
        if not self.send(details):
            raise AttemptAbandoned("the workflow no longer waits for this attempt")


@dataclass(frozen=True)
class Activity:
    name: str
    queue: str
    fn: ActivityFn
    takes_params: bool
    takes_context: bool = False

    def __call__(
        self,
        key: str,
        data: dict[str, Any],
        params: Mapping[str, Any],
        context: ActivityContext | None = None,
    ) -> Any:
        kwargs: dict[str, Any] = {}
        if self.takes_params:
            kwargs["params"] = dict(params)
        if self.takes_context:
            kwargs["context"] = context
        return self.fn(key, data, **kwargs)


REGISTRY: dict[str, Activity] = {}


def activity(name: str, *, queue: str = "default") -> Callable[[ActivityFn], ActivityFn]:
    """Register ``fn(key, data)`` as the activity ``name`` on ``queue``; a step may
    override the queue. A keyword ``params`` receives the step's ``params``; a keyword
    ``context`` receives an ``ActivityContext`` (heartbeats and the details the attempt
    before left)."""

    def register(fn: ActivityFn) -> ActivityFn:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"activity {name!r} is registered twice")
        parameters = inspect.signature(fn).parameters
        REGISTRY[name] = Activity(
            name, queue, fn, "params" in parameters, takes_context="context" in parameters
        )
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
