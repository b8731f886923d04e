"""Running activity attempts. The outbox row is the truth, not the broker message:

* ``attempt_dispatch`` hands due attempts to the workers (Celery, routed by queue;
  a thread pool in the embedded mode);
* ``attempt_run`` claims an attempt with a lease of the step's timeout, runs the
  activity outside any transaction, and records the outcome through the command path;
* ``attempt_sweep`` re-dispatches attempts whose message was lost and records an
  expired lease as a failed attempt with the error ``Timeout``.

An activity that takes ``context`` may heartbeat: each heartbeat goes through the
command path (``Heartbeat``), which moves the attempt's heartbeat timer (a durable
timer row) to ``now + heartbeat_timeout``; if the worker dies, the timer poller fires
it and the attempt fails with ``HeartbeatTimeout`` long before its lease of the
step's whole ``timeout`` runs out. The next attempt's context carries the last
heartbeat's details.

An outcome is recorded under the request id ``#attempt:<id>``, so whichever of the
worker and the sweeper records first wins and the other is a duplicate.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from templates_engine import TIMEOUT
from templates_engine import commands as cmd

from .. import clock, metrics
from ..activities import ActivityContext, AttemptAbandoned, get_activity
from ..definitions import definition_for
from ..models import ActivityAttempt, Workflow
from ..runtime.commands import CommandResult, RequestIdReused, command_execute

log = logging.getLogger(__name__)

_embedded_pool: ThreadPoolExecutor | None = None


def outcome_request_id(attempt_id: int) -> str:
    # "#" cannot start a client's request id (request_ids.REQUEST_ID_PATTERN), so no decision or
    # signal can take this one first and swallow the outcome as a "duplicate".
    return f"#attempt:{attempt_id}"


def attempt_dispatch(*, attempt_ids: list[int]) -> None:
    """Send attempts to their queues. Call after commit."""
    if not attempt_ids:
        return
    rows = list(ActivityAttempt.objects.filter(pk__in=attempt_ids).values_list("pk", "queue"))
    ActivityAttempt.objects.filter(pk__in=attempt_ids).update(dispatched_at=clock.now())
    if settings.APPROVALS_EMBEDDED_WORKER:
        global _embedded_pool
        if _embedded_pool is None:
            _embedded_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="activity")
        for pk, _queue in rows:
            _embedded_pool.submit(_run_embedded, pk)
        return
    from .tasks import run_activity

    # Called after commit: a broker that is down must not fail the command that
    # scheduled the attempts. What was not sent is marked undispatched, and the
    # sweeper sends it once the broker is back.
    unsent: list[int] = []
    for pk, queue in rows:
        if unsent:  # the broker is down: do not wait out its retries once per attempt
            unsent.append(pk)
            continue
        try:
            run_activity.apply_async(args=(pk,), queue=queue)
        except Exception:
            log.exception("could not send attempt %s to the queue %s", pk, queue)
            unsent.append(pk)
    if unsent:
        ActivityAttempt.objects.filter(pk__in=unsent).update(dispatched_at=None)


def _run_embedded(attempt_id: int) -> None:
    from django.db import close_old_connections

    try:
        attempt_run(attempt_id=attempt_id)
    except Exception:  # the sweeper will retry; a pool thread must not die silently
        log.exception("attempt %s failed to run", attempt_id)
    finally:
        close_old_connections()


def _claim(attempt_id: int, now: dt.datetime) -> ActivityAttempt | None:
    with transaction.atomic():
        attempt = (
            ActivityAttempt.objects.select_for_update(skip_locked=True)
            .filter(
                pk=attempt_id,
                finished_at__isnull=True,
                lease_until__isnull=True,
                not_before__lte=now,
            )
            .first()
        )
        if attempt is None:
            return None
        attempt.lease_until = now + dt.timedelta(seconds=attempt.timeout_seconds)
        attempt.save(update_fields=["lease_until"])
        return attempt


def attempt_run(*, attempt_id: int) -> CommandResult | None:
    """Claim, run and record one attempt. Returns None when it was not ours to run
    (finished, leased by another worker, or not yet due)."""
    now = clock.now()
    attempt = _claim(attempt_id, now)
    if attempt is None:
        return None
    data, template_id = (
        Workflow.objects.filter(pk=attempt.workflow_id).values_list("data", "template_id").get()
    )
    spec = get_activity(attempt.activity)
    metrics.ACTIVITY_ATTEMPTS.labels(attempt.activity).inc()
    outcome: cmd.Command
    if spec is None:
        outcome = cmd.ActivityFailed(
            attempt.step,
            attempt.attempt,
            "UnknownActivity",
            f"no activity {attempt.activity!r} is registered",
            attempt.undo,
            retryable=False,
            round=attempt.round,
        )
    else:
        try:
            result = spec(
                attempt.idempotency_key,
                dict(data or {}),
                _params(attempt, template_id),
                _context(attempt),
            )
            outcome = cmd.ActivityCompleted(
                attempt.step, attempt.attempt, attempt.undo, _jsonable(result), attempt.round
            )
        except AttemptAbandoned:
            log.info("attempt %s was abandoned by its workflow; stopped", attempt.pk)
            return None
        except Exception as exc:  # an activity's failure is data for the retry policy
            outcome = cmd.ActivityFailed(
                attempt.step,
                attempt.attempt,
                type(exc).__name__,
                str(exc)[:500],
                attempt.undo,
                retryable=getattr(exc, "retryable", True) is not False,
                round=attempt.round,
            )
    if isinstance(outcome, cmd.ActivityFailed):
        metrics.ACTIVITY_FAILURES.labels(attempt.activity, outcome.error).inc()
    try:
        return command_execute(
            tenant_id=attempt.tenant_id,
            workflow_id=attempt.workflow_id,
            command=outcome,
            request_id=outcome_request_id(attempt.pk),
        )
    except RequestIdReused:
        # The sweeper recorded this attempt as timed out while the activity ran (its
        # lease expired), under the same request id: the workflow has moved on, so
        # this outcome is late, not a conflict. Kept in the log and the metrics only.
        log.warning(
            "attempt %s of %s finished after it was recorded as timed out; its outcome "
            "(%s) is not used",
            attempt.pk,
            attempt.activity,
            outcome.type,
        )
        metrics.ACTIVITY_LATE_RESULTS.labels(attempt.activity).inc()
        return None


# A heartbeat is an event in the workflow's history: at most one per this share of the
# heartbeat timeout (a third leaves two more chances before the timer fires), and one
# per this many seconds when the step sets no heartbeat timeout.
_HEARTBEAT_SHARE = 1 / 3
_HEARTBEAT_INTERVAL_WITHOUT_TIMEOUT = 30.0


def _context(attempt: ActivityAttempt) -> ActivityContext:
    timeout = attempt.heartbeat_timeout_seconds
    return ActivityContext(
        attempt=attempt.attempt,
        round=attempt.round,
        heartbeat_details=attempt.heartbeat_details,
        send=lambda details: attempt_heartbeat(attempt=attempt, details=details),
        min_interval=(
            timeout * _HEARTBEAT_SHARE if timeout else _HEARTBEAT_INTERVAL_WITHOUT_TIMEOUT
        ),
        tenant_id=attempt.tenant_id,
    )


def attempt_heartbeat(*, attempt: ActivityAttempt, details: Any = None) -> bool:
    """Record a heartbeat of ``attempt`` through the command path. False when the
    workflow no longer waits for it (it failed meanwhile, or the workflow ended)."""
    command_execute(
        tenant_id=attempt.tenant_id,
        workflow_id=attempt.workflow_id,
        command=cmd.Heartbeat(
            attempt.step, attempt.attempt, _jsonable(details), attempt.undo, attempt.round
        ),
    )
    return ActivityAttempt.objects.filter(pk=attempt.pk, finished_at__isnull=True).exists()


def _params(attempt: ActivityAttempt, template_id: int) -> Mapping[str, Any]:
    """The step's ``params`` from the workflow template version the workflow pinned."""
    step = definition_for(template_id).action(attempt.step)
    spec = step.compensate if attempt.undo else step.run
    return spec.params if spec is not None else {}


def _jsonable(value: Any) -> Any:
    import json

    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def attempt_sweep(*, redispatch_after: float = 30.0, limit: int = 500) -> dict[str, int]:
    """Record expired leases as timeouts and re-dispatch attempts whose message was
    lost or never sent. Safe to run from several processes at once."""
    now = clock.now()
    expired = list(
        ActivityAttempt.objects.filter(finished_at__isnull=True, lease_until__lt=now)
        .order_by("lease_until")
        .values_list("pk", "tenant_id", "workflow_id", "step", "attempt", "undo", "round")[:limit]
    )
    for pk, tenant_id, workflow_id, step, number, undo, round_ in expired:
        try:
            command_execute(
                tenant_id=tenant_id,
                workflow_id=workflow_id,
                command=cmd.ActivityFailed(
                    step, number, TIMEOUT, "the attempt's lease expired", undo, round=round_
                ),
                request_id=outcome_request_id(pk),
            )
        except Exception:  # one bad row must not stop the sweep; it is retried next pass
            log.exception("could not record the expired lease of attempt %s", pk)
    stale = now - dt.timedelta(seconds=redispatch_after)
    lost = list(
        ActivityAttempt.objects.filter(
            Q(dispatched_at__isnull=True) | Q(dispatched_at__lt=stale),
            finished_at__isnull=True,
            lease_until__isnull=True,
            not_before__lte=now,
        )
        .order_by("not_before")
        .values_list("pk", flat=True)[:limit]
    )
    attempt_dispatch(attempt_ids=lost)
    return {"timed_out": len(expired), "dispatched": len(lost)}
