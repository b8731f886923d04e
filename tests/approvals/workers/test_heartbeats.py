"""Heartbeats delivered by the worker: an activity that takes ``context`` heartbeats
through the command path; when its heartbeats stop, the heartbeat timer fails the
attempt with HeartbeatTimeout and the next attempt gets the last details. (A real
Celery worker killed mid-activity: tests/approvals/durability/test_heartbeats.py.)"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from approvals import clock
from approvals.activities import ActivityContext, AttemptAbandoned, activity
from approvals.models import ActivityAttempt, User, WorkflowEvent
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_cancel, workflow_start
from approvals.workers.activities import attempt_heartbeat, attempt_run
from approvals.workers.timers import timer_drain

pytestmark = pytest.mark.django_db

HEARTBEAT_TIMEOUT = 30.0
STEP_TIMEOUT = 3600.0
SEEN: list[Any] = []


@activity("test_heartbeating_job")
def heartbeating_job(key: str, data: dict[str, Any], *, context: ActivityContext) -> Any:
    SEEN.append((context.attempt, context.heartbeat_details))
    context.heartbeat({"done": 7})
    return {"resumed_from": context.heartbeat_details}


def _start(acme: Any, subject: str = "J-1") -> str:
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "long-job",
            "steps": [
                {
                    "id": "job",
                    "kind": "action",
                    "activity": "test_heartbeating_job",
                    "timeout": STEP_TIMEOUT,
                    "heartbeat_timeout": HEARTBEAT_TIMEOUT,
                    "retry": {"initial_interval": 1, "jitter": False},
                }
            ],
        },
    )
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="long-job",
        subject_type="job",
        subject_id=subject,
        data={},
    )
    return str(started.workflow_id)


def _claimed(wid: str, attempt: int) -> ActivityAttempt:
    """The attempt as a worker holds it after its claim (the lease set)."""
    row = ActivityAttempt.objects.get(workflow_id=wid, attempt=attempt)
    ActivityAttempt.objects.filter(pk=row.pk).update(lease_until=clock.now())
    row.refresh_from_db()
    return row


def test_an_activity_heartbeats_through_the_command_path(acme):
    SEEN.clear()
    wid = _start(acme)

    attempt_run(attempt_id=ActivityAttempt.objects.get(workflow_id=wid).pk)

    [beat] = WorkflowEvent.objects.filter(workflow_id=wid, type="ActivityHeartbeat")
    assert beat.payload["details"] == {"done": 7}
    assert beat.payload["timer"]["kind"] == "heartbeat"
    row = ActivityAttempt.objects.get(workflow_id=wid)
    assert row.outcome == "ok"
    assert row.heartbeat_at is not None
    assert row.heartbeat_details == {"done": 7}
    assert SEEN == [(1, None)]


def test_stopped_heartbeats_fail_the_attempt_and_the_next_resumes_from_the_details(acme):
    # given an attempt that heartbeats and then goes silent (its worker died)
    SEEN.clear()
    wid = _start(acme)
    first = _claimed(wid, 1)
    assert attempt_heartbeat(attempt=first, details={"done": 3}) is True

    # when the heartbeat timeout passes, but not the step's timeout
    with clock.shifted(dt.timedelta(seconds=HEARTBEAT_TIMEOUT + 1)):
        timer_drain(batch=10, max_batches=10)

    # then the attempt failed with HeartbeatTimeout, and the retry carries the details
    first.refresh_from_db()
    assert first.outcome == "HeartbeatTimeout"
    second = ActivityAttempt.objects.get(workflow_id=wid, attempt=2)
    assert second.heartbeat_details == {"done": 3}
    failed = WorkflowEvent.objects.get(workflow_id=wid, type="ActivityFailed")
    assert failed.payload["error"] == "HeartbeatTimeout"
    with clock.shifted(dt.timedelta(seconds=HEARTBEAT_TIMEOUT + 10)):
        result = attempt_run(attempt_id=second.pk)
    assert result is not None and result.status == "APPROVED"
    assert SEEN == [(2, {"done": 3})]


def test_a_heartbeat_before_the_timeout_moves_the_timer_on(acme):
    wid = _start(acme)
    first = _claimed(wid, 1)
    attempt_heartbeat(attempt=first, details={"done": 1})
    with clock.shifted(dt.timedelta(seconds=HEARTBEAT_TIMEOUT * 0.8)):
        attempt_heartbeat(attempt=first, details={"done": 2})
    with clock.shifted(dt.timedelta(seconds=HEARTBEAT_TIMEOUT + 1)):
        timer_drain(batch=10, max_batches=10)  # the first beat's deadline: moved on

    first.refresh_from_db()
    assert first.finished_at is None
    assert first.heartbeat_details == {"done": 2}


def test_a_heartbeat_of_an_abandoned_attempt_raises_and_records_nothing(acme):
    wid = _start(acme)
    first = _claimed(wid, 1)
    workflow_cancel(
        user=User.objects.get(username="alice"), workflow_id=wid, reason="", request_id="c-1"
    )
    events = WorkflowEvent.objects.filter(workflow_id=wid).count()

    context = ActivityContext(
        attempt=1,
        round=1,
        heartbeat_details=None,
        send=lambda details: attempt_heartbeat(attempt=first, details=details),
    )
    with pytest.raises(AttemptAbandoned):
        context.heartbeat({"done": 1})
    assert WorkflowEvent.objects.filter(workflow_id=wid).count() == events
    first.refresh_from_db()
    assert first.outcome == "abandoned"


def test_heartbeats_closer_than_the_minimum_interval_send_once():
    sent: list[Any] = []
    context = ActivityContext(
        attempt=1,
        round=1,
        heartbeat_details=None,
        send=lambda details: sent.append(details) or True,
        min_interval=3600.0,
    )
    for n in range(5):
        context.heartbeat({"done": n})
    assert sent == [{"done": 0}]
