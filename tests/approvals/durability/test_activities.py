"""Activities survive killed workers and a flushed broker: the outbox row, not the
broker message, is the truth (DESIGN.md, "Time and background work").

A real Celery worker runs in its own process group and is killed with SIGKILL; the
sweeper (``attempt_sweep``) runs in the test process, as beat would run it."""

from __future__ import annotations

import socket
from typing import Any

import pytest
import redis

from approvals.models import ActivityAttempt, Workflow
from approvals.workers.activities import attempt_sweep

from .activities import effects
from .conftest import Processes, use_broker, wait_until
from .support import action_template, assert_histories_intact, event_types, publish, start, statuses

pytestmark = pytest.mark.topology

APPROVED = "APPROVED"
# Where the worker is when it dies: the hold it waits on (see activities.py).
MOMENTS = {
    # took the message, before the call (no lease yet): only the sweeper's
    # re-dispatch of a lost message brings the attempt back
    "received": "received",
    # inside the activity, before its effect: the lease runs out
    "during": "before",
    # the effect is done, the outcome not yet recorded: the lease runs out and the
    # retry repeats the call, which the downstream system drops by its key
    "after": "after",
}


def sweep_until_approved(ids: list[str], *, timeout: float, what: str) -> None:
    def approved() -> bool:
        attempt_sweep(redispatch_after=1.0)
        return statuses(ids).get(APPROVED, 0) == len(ids)

    wait_until(approved, timeout=timeout, interval=0.25, what=what)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_worker_killed_mid_activity_runs_it_again_with_one_effect(
    acme: Any,
    broker: redis.Redis,
    effects_table: None,
    processes: Processes,
    queue: str,
    moment: str,
) -> None:
    # given a worker that will stop at the chosen moment
    publish(acme, action_template("kill-worker", queue, timeout="PT2S"))
    hold = MOMENTS[moment]
    broker.set(f"durability:hold:{hold}", 1)
    doomed = processes.worker(queue)
    [workflow_id] = start("kill-worker", 1)
    key = f"{workflow_id}/effect0"
    wait_until(lambda: broker.exists(f"durability:at:{hold}"), timeout=60, what=f"worker at {hold}")

    # when it is killed there, and a new worker takes over
    doomed.kill()
    broker.delete(f"durability:hold:{hold}")
    processes.worker(queue)
    sweep_until_approved([workflow_id], timeout=90, what="the workflow to complete")

    # then the effect happened once, however often the activity was called
    invocations = int(broker.get(f"durability:invocations:{key}") or 0)
    distinct, calls = effects(key)
    attempts = list(
        ActivityAttempt.objects.filter(workflow_id=workflow_id)
        .order_by("attempt")
        .values_list("attempt", "outcome")
    )
    if moment == "received":
        assert (invocations, distinct, calls) == (1, 1, 1)
        assert attempts == [(1, "ok")]
    else:
        assert invocations == 2
        assert (distinct, calls) == (1, 1 if moment == "during" else 2)
        assert attempts == [(1, "Timeout"), (2, "ok")]
    types = event_types(workflow_id)
    assert types.count("ActivitySucceeded") == 1
    assert types[-1] == "WorkflowCompleted"
    assert_histories_intact([workflow_id])


@pytest.mark.django_db(transaction=True)
def test_activities_in_flight_when_the_broker_is_flushed_still_complete(
    acme: Any, broker: redis.Redis, effects_table: None, processes: Processes, queue: str
) -> None:
    # given 20 workflows of two activities each, queued while no worker runs
    publish(acme, action_template("flush", queue, steps=2, timeout="PT10S"))
    ids = start("flush", 20)
    assert broker.llen(queue) == 20

    # when the broker loses every message
    broker.flushdb()
    # and loses them again while a worker has an activity in flight
    broker.set("durability:delay", 0.1)
    processes.worker(queue)

    def some_done() -> bool:
        attempt_sweep(redispatch_after=1.0)
        return effects()[0] >= 8

    wait_until(some_done, timeout=60, interval=0.2, what="some activities to run")
    broker.flushdb()

    # then the sweeper brings every attempt back and every workflow completes
    sweep_until_approved(ids, timeout=120, what="every workflow to complete")
    assert effects() == (40, 40)
    assert ActivityAttempt.objects.exclude(outcome="ok").count() == 0
    assert Workflow.objects.filter(pk__in=ids, version=0).count() == 0
    assert_histories_intact(ids)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.django_db(transaction=True)
def test_workflows_survive_a_redis_restart_with_activities_in_flight(
    acme: Any, broker: redis.Redis, effects_table: None, processes: Processes, queue: str
) -> None:
    # given a private Redis, and a worker busy with 10 workflows of two activities
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = processes.redis_server(port)
    use_broker(url)
    private = redis.Redis.from_url(url)
    private.set("durability:delay", 0.1)
    publish(acme, action_template("redis-restart", queue, steps=2, timeout="PT10S"))
    worker = processes.worker(queue, broker_url=url)
    ids = start("redis-restart", 10)
    wait_until(lambda: effects()[0] >= 5, timeout=60, interval=0.1, what="some activities to run")

    # when Redis dies, with messages queued and an activity in flight
    server.kill()
    # then starting a workflow still works: the outbox row waits for the sweeper
    ids += start("redis-restart", 5, first=10)
    attempt_sweep(redispatch_after=1.0)

    # when Redis comes back empty
    processes.redis_server(port)

    # then the worker reconnects by itself and every workflow completes
    sweep_until_approved(ids, timeout=120, what="every workflow to complete")
    assert worker.popen.poll() is None, "the worker died"
    assert effects()[0] == 30
    assert_histories_intact(ids)
