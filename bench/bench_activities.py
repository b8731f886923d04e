"""The benchmark's no-op activity. It records the moment it starts (``time.time()``)
in Redis, keyed by its idempotency key, and returns at once."""

from __future__ import annotations

import os
import time
from typing import Any

import redis

from approvals.activities import activity

NOOP = "bench_noop"
STARTS = "bench:activity:start"
# Set by activity_worker.py: when the Celery task body begins and ends, per attempt id.
PRERUN = "bench:task:prerun"
POSTRUN = "bench:task:postrun"
_client: redis.Redis | None = None


def broker_url() -> str:
    return os.environ.get("BENCH_ACTIVITY_BROKER_URL", "redis://127.0.0.1:6379/7")


def client() -> redis.Redis:
    global _client
    if _client is None:
        _client = redis.Redis.from_url(broker_url())
    return _client


@activity(NOOP, queue="default")
def bench_noop(key: str, data: dict[str, Any]) -> None:
    client().hset(STARTS, key, repr(time.time()))
