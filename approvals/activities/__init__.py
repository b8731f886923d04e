"""Activities: the Python callables automated steps run, registered by name.

    @activity("reserve_budget", queue="finance")
    def reserve_budget(key: str, data: dict) -> dict | None: ...

``key`` is the stable idempotency key of that step of that workflow; pass it on to
the systems called so they can drop repeats. Raising fails the attempt; the error
name is the exception's class name, which a step's retry policy can list as
non-retryable.

A long activity takes ``context`` and calls ``context.heartbeat(details)`` as it goes;
a step with ``heartbeat_timeout`` fails the attempt with ``HeartbeatTimeout`` when the
heartbeats stop, and the next attempt finds the last details in
``context.heartbeat_details``, to resume where it was.
"""

from .registry import (
    REGISTRY,
    Activity,
    ActivityContext,
    AttemptAbandoned,
    NonRetryableError,
    activity,
    activity_names,
    get_activity,
)

__all__ = [
    "REGISTRY",
    "Activity",
    "ActivityContext",
    "AttemptAbandoned",
    "NonRetryableError",
    "activity",
    "activity_names",
    "get_activity",
]
