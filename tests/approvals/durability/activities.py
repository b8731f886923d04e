"""Activities for the durability tests, registered on the queue ``durability`` (each
test gives its steps a queue of its own).

``durable_effect`` stands for a downstream system that honours an Idempotency-Key: it
records its effect in the table ``durability_effect`` keyed by the key it is given,
so a repeat of the same key adds a call but not a second effect. The test reads
``count(*)`` (distinct effects) and ``sum(calls)`` (times the system was asked).

A test makes the activity stop at a chosen moment by setting a Redis key in the
broker's database (the worker and the test share it):

* ``durability:hold:before``: stop before the effect is written;
* ``durability:hold:after``: stop after the effect is written, before returning
  (the attempt's outcome is then not yet recorded);
* ``durability:hold:received``: (worker.py) stop when the worker has received the
  task, before ``attempt_run`` claims the attempt.

On reaching a hold the activity sets ``durability:at:<moment>`` and waits until the
hold key goes away (or ``HOLD_LIMIT`` seconds pass), so the test knows the worker is
exactly there when it kills it. ``durability:invocations:<key>`` counts invocations.
"""

from __future__ import annotations

import os
import time
from typing import Any

import redis
from django.db import connection

from approvals.activities import activity

QUEUE = "durability"
TABLE = "durability_effect"
HOLD_LIMIT = 120.0
# Seconds each call takes, to spread work over time (the database restart test).
DELAY_KEY = "durability:delay"


def broker() -> redis.Redis:
    from django.conf import settings

    return redis.Redis.from_url(os.environ.get("CELERY_BROKER_URL") or settings.CELERY_BROKER_URL)


def effect_table_create() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLE} (key text PRIMARY KEY, calls int NOT NULL)"
        )


def effect_table_clear() -> None:
    effect_table_create()
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TABLE}")


def effects(prefix: str = "") -> tuple[int, int]:
    """(distinct effects, calls) for the keys starting with ``prefix``."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), coalesce(sum(calls), 0) FROM {TABLE} WHERE key LIKE %s",
            [prefix.replace("%", r"\%").replace("_", r"\_") + "%"],
        )
        distinct, calls = cursor.fetchone()
    return int(distinct), int(calls)


def hold(r: redis.Redis, moment: str) -> None:
    """Stop here while the test holds ``moment`` (see the module doc)."""
    if not r.exists(f"durability:hold:{moment}"):
        return
    r.set(f"durability:at:{moment}", os.getpid())
    deadline = time.monotonic() + HOLD_LIMIT
    while r.exists(f"durability:hold:{moment}") and time.monotonic() < deadline:
        time.sleep(0.05)


def _record(key: str) -> bool:
    """The downstream call: the effect happens once per key. True when it was new."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {TABLE} (key, calls) VALUES (%s, 1) "
            f"ON CONFLICT (key) DO UPDATE SET calls = {TABLE}.calls + 1 RETURNING calls",
            [key],
        )
        (calls,) = cursor.fetchone()
    return bool(calls == 1)


@activity("durable_effect", queue=QUEUE)
def durable_effect(key: str, data: dict[str, Any]) -> dict[str, Any]:
    r = broker()
    r.incr(f"durability:invocations:{key}")
    delay = r.get(DELAY_KEY)
    if delay:
        time.sleep(float(delay))
    hold(r, "before")
    new = _record(key)
    hold(r, "after")
    return {"key": key, "new": new}


HEARTBEAT_ITEMS = 6
# The item before which ``durable_heartbeats`` waits on the hold ``beating``.
HEARTBEAT_HOLD_AT = 3


@activity("durable_heartbeats", queue=QUEUE)
def durable_heartbeats(key: str, data: dict[str, Any], *, context: Any) -> dict[str, Any]:
    """Works through ``HEARTBEAT_ITEMS`` items, heartbeating ``{"done": n}`` after each,
    and starts from the ``done`` the attempt before left. Each attempt pushes
    ``<attempt>:<first item>`` onto ``durability:resumed:<key>``."""
    r = broker()
    first = int((context.heartbeat_details or {}).get("done", 0))
    r.rpush(f"durability:resumed:{key}", f"{context.attempt}:{first}")
    for item in range(first, HEARTBEAT_ITEMS):
        if item == HEARTBEAT_HOLD_AT:
            hold(r, "beating")
        context.heartbeat({"done": item + 1})
        time.sleep(0.05)
    return {"done": HEARTBEAT_ITEMS}
