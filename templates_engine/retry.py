"""Retry policies, with the fields users know from Temporal and Step Functions."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .durations import parse_duration
from .errors import DefinitionError

TIMEOUT = "Timeout"
"""The error name of an attempt that ran out of time; a policy can list it."""

HEARTBEAT_TIMEOUT = "HeartbeatTimeout"
"""The error name of an attempt that stopped heartbeating for longer than its step's
``heartbeat_timeout``; a policy can list it too."""

_FIELDS = {
    "initial_interval",
    "backoff_coefficient",
    "max_interval",
    "max_attempts",
    "non_retryable",
    "retry_on",
    "jitter",
}
MAX_ATTEMPTS = 100
TOO_MANY_ATTEMPTS = (
    f"must be at most {MAX_ATTEMPTS}; an activity that fails {MAX_ATTEMPTS} times will not"
    " succeed on a later try"
)
MIN_INITIAL_INTERVAL = 1.0
INTERVAL_TOO_SHORT = (
    "must be at least 1 second (PT1S): a retry sooner than that is a storm against the"
    " service that failed, not a back-off"
)
RETRY_ON_WITH_NON_RETRYABLE = (
    "may not be given together with non_retryable: list either the only errors to retry "
    "(retry_on) or the errors never to retry (non_retryable)"
)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how soon an activity is tried again."""

    initial_interval: float = 1.0
    backoff_coefficient: float = 2.0
    max_interval: float = 100.0
    max_attempts: int = 3
    non_retryable: frozenset[str] = frozenset()
    jitter: bool = True
    # When set, only these error names are retried (Step Functions' ``ErrorEquals``);
    # any other error fails the step for good. ``Timeout`` must be listed to retry one.
    retry_on: frozenset[str] | None = None

    @classmethod
    def parse(cls, doc: object, path: str) -> RetryPolicy:
        """Parse a ``retry`` object; missing fields take the defaults."""
        if doc is None:
            return cls()
        if not isinstance(doc, Mapping):
            raise DefinitionError(path, "must be an object")
        unknown = sorted(set(doc) - _FIELDS)
        if unknown:
            raise DefinitionError(f"{path}.{unknown[0]}", "is not a retry policy field")
        base = cls()
        initial = parse_duration(
            doc.get("initial_interval", base.initial_interval), f"{path}.initial_interval"
        )
        maximum = parse_duration(doc.get("max_interval", base.max_interval), f"{path}.max_interval")
        coefficient = doc.get("backoff_coefficient", base.backoff_coefficient)
        if isinstance(coefficient, bool) or not isinstance(coefficient, int | float):
            raise DefinitionError(f"{path}.backoff_coefficient", "must be a number")
        if not 1.0 <= coefficient <= 100.0:
            raise DefinitionError(f"{path}.backoff_coefficient", "must be between 1 and 100")
        attempts = doc.get("max_attempts", base.max_attempts)
        if isinstance(attempts, bool) or not isinstance(attempts, int):
            raise DefinitionError(f"{path}.max_attempts", "must be an integer")
        if attempts < 1:
            raise DefinitionError(f"{path}.max_attempts", "must be at least 1")
        if attempts > MAX_ATTEMPTS:
            raise DefinitionError(f"{path}.max_attempts", TOO_MANY_ATTEMPTS)
        if maximum < initial:
            raise DefinitionError(f"{path}.max_interval", "must not be less than initial_interval")
        names = _error_names(doc.get("non_retryable", []), f"{path}.non_retryable")
        retry_on: frozenset[str] | None = None
        if "retry_on" in doc:
            if "non_retryable" in doc:
                raise DefinitionError(f"{path}.retry_on", RETRY_ON_WITH_NON_RETRYABLE)
            retry_on = _error_names(doc["retry_on"], f"{path}.retry_on")
        jitter = doc.get("jitter", base.jitter)
        if not isinstance(jitter, bool):
            raise DefinitionError(f"{path}.jitter", "must be true or false")
        return cls(initial, float(coefficient), maximum, attempts, names, jitter, retry_on)

    def publish_problem(self) -> str | None:
        """Why this policy may not be published now, or None: its first interval under
        ``MIN_INITIAL_INTERVAL``. Checked at publish, not at parse, so a version already
        published (and its running workflows) still loads."""
        if self.initial_interval < MIN_INITIAL_INTERVAL:
            return INTERVAL_TOO_SHORT
        return None

    def base_delay(self, failures: int) -> float:
        """The delay after the ``failures``-th failure, before jitter."""
        # Cap the exponent: the result is capped by max_interval anyway, and a huge
        # power would overflow a float.
        exponent = min(failures - 1, 1024)
        try:
            raw = self.initial_interval * self.backoff_coefficient**exponent
        except OverflowError:
            raw = self.max_interval
        return min(self.max_interval, raw)

    def delay(self, failures: int, rng: random.Random) -> float:
        """The delay after the ``failures``-th failure: ``base_delay`` times a random
        fraction from ``rng`` when jitter is on."""
        delay = self.base_delay(failures)
        return delay * rng.random() if self.jitter else delay

    def gives_up(self, attempt: int, error: str) -> bool:
        """True when a failure of ``attempt`` with ``error`` fails the step for good."""
        if self.retry_on is not None and error not in self.retry_on:
            return True
        return error in self.non_retryable or attempt >= self.max_attempts

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "initial_interval": self.initial_interval,
            "backoff_coefficient": self.backoff_coefficient,
            "max_interval": self.max_interval,
            "max_attempts": self.max_attempts,
            "non_retryable": sorted(self.non_retryable),
            "jitter": self.jitter,
        }
        if self.retry_on is not None:  # parse takes one of the two lists, never both
            del doc["non_retryable"]
            doc["retry_on"] = sorted(self.retry_on)
        return doc


def _error_names(names: object, path: str) -> frozenset[str]:
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise DefinitionError(path, "must be a list of error names")
    return frozenset(names)
