"""An activity that finishes after the sweeper recorded its attempt as timed out: the
late outcome is logged and counted, the worker raises nothing, and the history keeps the
timeout (the retry policy already acted on it)."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import pytest

from approvals import clock, metrics
from approvals.activities import activity
from approvals.models import ActivityAttempt, User, WorkflowEvent
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start
from approvals.workers.activities import attempt_run, attempt_sweep

pytestmark = pytest.mark.django_db


@activity("test_outlives_its_lease")
def outlives_its_lease(key: str, data: dict[str, Any], params: dict[str, Any]) -> Any:
    # While this attempt runs, its lease runs out and the sweeper records the timeout,
    # as a sweeper in another process would.
    ActivityAttempt.objects.filter(idempotency_key=key).update(
        lease_until=clock.now() - dt.timedelta(seconds=1)
    )
    assert attempt_sweep()["timed_out"] == 1
    return {"done": True}


def _start(acme: Any) -> str:
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "slow-job",
            "steps": [
                {
                    "id": "job",
                    "kind": "action",
                    "activity": "test_outlives_its_lease",
                    "timeout": 5,
                    "retry": {"max_attempts": 1},
                }
            ],
        },
    )
    started = workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="slow-job",
        subject_type="job",
        subject_id="LATE-1",
        data={},
    )
    return str(started.workflow_id)


def _late_count() -> float:
    return metrics.ACTIVITY_LATE_RESULTS.labels("test_outlives_its_lease")._value.get()


def test_a_result_after_the_attempt_timed_out_is_logged_and_counted_not_raised(acme, caplog):
    wid = _start(acme)
    attempt = ActivityAttempt.objects.get(workflow_id=wid)
    before = _late_count()

    with caplog.at_level(logging.WARNING, logger="approvals.workers.activities"):
        result = attempt_run(attempt_id=attempt.pk)

    assert result is None
    assert _late_count() == before + 1
    assert "finished after it was recorded as timed out" in caplog.text
    types = list(
        WorkflowEvent.objects.filter(workflow_id=wid).order_by("seq").values_list("type", flat=True)
    )
    # the timeout is what the history keeps; the late completion is not appended
    assert "ActivityFailed" in types
    assert "ActivityCompleted" not in types
