"""The timer poller. It claims due timers with ``FOR UPDATE SKIP LOCKED`` and delivers
them through the command path, a group of workflows per transaction
(``command_execute_many``: one commit for the group); a fire and its events commit
together. A group that fails as a whole is delivered again one timer at a time.

Exactly once: a timer's key leaves the workflow state when it fires (or when a
decision cancels it), and the command path decides under the workflow's row lock,
so a second delivery of the same timer finds nothing to do.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F

from templates_engine import commands as cmd

from .. import clock, metrics
from ..models import Timer
from ..runtime.commands import command_execute, command_execute_many

log = logging.getLogger(__name__)

CLAIM_SECONDS = 60
MAX_FIRE_FAILURES = 10


# A claimed timer: (tenant id, timer id, workflow id, timer key).
_Claimed = tuple[int, int, str, str]


def _claim(now: dt.datetime, batch: int) -> list[_Claimed]:
    """Claim up to ``batch`` due timers for this poller; other pollers skip them."""
    with transaction.atomic():
        rows = list(
            Timer.objects.select_for_update(skip_locked=True)
            .filter(fired_at__isnull=True, fire_at__lte=now, dead_at__isnull=True)
            .exclude(claimed_until__gt=now)
            .order_by("fire_at")
            .values_list("pk", "tenant_id", "workflow_id", "key")[:batch]
        )
        if rows:
            Timer.objects.filter(pk__in=[r[0] for r in rows]).update(
                claimed_until=now + dt.timedelta(seconds=CLAIM_SECONDS)
            )
    return [(tenant_id, pk, str(workflow_id), key) for pk, tenant_id, workflow_id, key in rows]


def _fire_batch(batch: int, group: int) -> tuple[int, int]:
    """Claim one batch and fire it, ``group`` workflows per transaction; returns
    (claimed, fired)."""
    now = clock.now()
    claimed = _claim(now, batch)
    fired = 0
    # Workflow order gives every batch the same lock order.
    for chunk in _groups(sorted(claimed, key=lambda r: r[2]), group):
        fired += _fire_group(chunk, now) if len(chunk) > 1 else _fire_each(chunk, now)
    metrics.TIMERS_FIRED.inc(fired)
    return len(claimed), fired


def _groups(claimed: list[_Claimed], size: int) -> Iterator[list[_Claimed]]:
    """The claimed timers in groups of at most ``size``, no workflow twice in a group
    (a workflow's second timer goes in a later group than its first)."""
    pending = claimed
    while pending:
        chunk: list[_Claimed] = []
        later: list[_Claimed] = []
        seen: set[str] = set()
        for item in pending:
            if len(chunk) < size and item[2] not in seen:
                seen.add(item[2])
                chunk.append(item)
            else:
                later.append(item)
        yield chunk
        pending = later


def _fire_group(chunk: list[_Claimed], now: dt.datetime) -> int:
    """Fire a group in one transaction (``command_execute_many``); if the transaction
    fails as a whole, deliver its timers one by one, so that one bad timer is
    counted against itself alone."""
    try:
        results = command_execute_many(
            [
                (tenant_id, workflow_id, cmd.TimerFired(key))
                for tenant_id, _, workflow_id, key in chunk
            ]
        )
    except Exception:
        log.warning(
            "a group of %d timers failed together; firing them one by one",
            len(chunk),
            exc_info=True,
        )
        return _fire_each(chunk, now)
    settled, refused = [], []
    for item, result in zip(chunk, results, strict=True):
        if isinstance(result, Exception):
            refused.append(item)  # nothing of it was written
        elif not result.recorded:
            settled.append(item[1])
    if settled:
        _settle(settled, now)
    # Refused ones go the one-by-one way, which counts the failure against the timer.
    return len(chunk) - len(refused) + (_fire_each(refused, now) if refused else 0)


def _fire_each(chunk: list[_Claimed], now: dt.datetime) -> int:
    fired = 0
    for tenant_id, pk, workflow_id, key in chunk:
        try:
            done = command_execute(
                tenant_id=tenant_id, workflow_id=workflow_id, command=cmd.TimerFired(key)
            )
            if not done.recorded:
                _settle([pk], now)
            fired += 1
        except Exception as exc:
            # Left claimed: it is due again once the claim lapses, until it is parked.
            log.exception("timer %s of workflow %s failed to fire", key, workflow_id)
            if connection.in_atomic_block:
                raise
            _record_failure(pk, exc, now)
    return fired


def _settle(pks: list[int], now: dt.datetime) -> None:
    """Timers whose workflow no longer held them (cancelled or fired meanwhile): the
    rows are done with, and no event will say so."""
    Timer.objects.filter(pk__in=pks, fired_at__isnull=True).update(fired_at=now)


def _record_failure(pk: int, exc: Exception, now: dt.datetime) -> None:
    Timer.objects.filter(pk=pk).update(
        failures=F("failures") + 1, last_error=f"{type(exc).__name__}: {exc}"[:2000]
    )
    parked = Timer.objects.filter(pk=pk, failures__gte=MAX_FIRE_FAILURES).update(dead_at=now)
    if parked:
        log.error("timer %s parked after %d failed fires", pk, MAX_FIRE_FAILURES)


def timer_fire_due(*, batch: int | None = None, group: int | None = None) -> int:
    """Fire the timers due now, one batch; returns how many were delivered."""
    return _fire_batch(
        batch or settings.APPROVALS_TIMER_BATCH, group or settings.APPROVALS_TIMER_GROUP
    )[1]


def timer_drain(
    *, batch: int | None = None, group: int | None = None, max_batches: int = 1000
) -> int:
    """Fire due timers until none is left to claim (or ``max_batches`` ran)."""
    total = 0
    for _ in range(max_batches):
        claimed, fired = _fire_batch(
            batch or settings.APPROVALS_TIMER_BATCH, group or settings.APPROVALS_TIMER_GROUP
        )
        total += fired
        if claimed == 0:
            break
    return total


def timer_prune(*, older_than: dt.timedelta, limit: int = 10_000) -> int:
    """Delete timers fired longer ago than ``older_than``: the events keep the record,
    and the table stays the size of what is pending."""
    cutoff = clock.now() - older_than
    ids = list(Timer.objects.filter(fired_at__lt=cutoff).values_list("pk", flat=True)[:limit])
    return Timer.objects.filter(pk__in=ids).delete()[0] if ids else 0
