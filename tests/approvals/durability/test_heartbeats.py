"""A worker killed during a heartbeating activity is noticed by the heartbeat timeout,
not the step's: a real Celery worker in its own process group, killed with SIGKILL,
and the scheduler loop (timer poller and sweeper) in another process."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from approvals.models import ActivityAttempt, WorkflowEvent

from .activities import HEARTBEAT_HOLD_AT
from .conftest import Processes, wait_until
from .support import FAST_RETRY, assert_histories_intact, publish, start, statuses

pytestmark = pytest.mark.topology

# The step's timeout is far longer than the test may wait: only the heartbeat timeout
# can end the dead worker's attempt in time.
STEP_TIMEOUT = "PT30M"
HEARTBEAT_TIMEOUT = "PT2S"
WAIT_LIMIT = 120.0


def _template(queue: str) -> dict[str, Any]:
    return {
        "key": "heartbeats",
        "title": "heartbeats",
        "steps": [
            {
                "id": "job",
                "kind": "action",
                "activity": "durable_heartbeats",
                "queue": queue,
                "timeout": STEP_TIMEOUT,
                "heartbeat_timeout": HEARTBEAT_TIMEOUT,
                "retry": FAST_RETRY,
            }
        ],
    }


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_while_heartbeating_is_noticed_within_the_heartbeat_timeout(
    acme: Any, broker: redis.Redis, processes: Processes, queue: str
) -> None:
    # given a worker in the middle of a heartbeating activity
    publish(acme, _template(queue))
    broker.set("durability:hold:beating", 1)
    doomed = processes.worker(queue)
    processes.scheduler()
    [workflow_id] = start("heartbeats", 1)
    key = f"{workflow_id}/job"
    wait_until(lambda: broker.exists("durability:at:beating"), timeout=60, what="the activity")

    # when the worker dies there and another one comes up
    doomed.kill()
    broker.delete("durability:hold:beating")
    processes.worker(queue)

    # then the attempt fails with HeartbeatTimeout (the 30-minute lease still runs) and
    # the retry resumes from the last heartbeat's details
    wait_until(
        lambda: statuses([workflow_id]).get("APPROVED") == 1,
        timeout=WAIT_LIMIT,
        what="the retried activity to complete",
    )
    attempts = list(
        ActivityAttempt.objects.filter(workflow_id=workflow_id)
        .order_by("attempt")
        .values_list("attempt", "outcome")
    )
    assert attempts == [(1, "HeartbeatTimeout"), (2, "ok")]
    failed = WorkflowEvent.objects.get(workflow_id=workflow_id, type="ActivityFailed")
    assert failed.payload["error"] == "HeartbeatTimeout"
    beats = WorkflowEvent.objects.filter(
        workflow_id=workflow_id, type="ActivityHeartbeat", payload__attempt=1
    ).order_by("seq")
    last_done = beats.last().payload["details"]["done"]  # type: ignore[union-attr]
    assert 1 <= last_done <= HEARTBEAT_HOLD_AT
    resumed = [v.decode() for v in broker.lrange(f"durability:resumed:{key}", 0, -1)]
    assert resumed == ["1:0", f"2:{last_done}"]
    assert_histories_intact([workflow_id])
