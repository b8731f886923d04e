"""Scheduled starts: the periodic job starts each schedule's due period once. A
period fired twice (two beats, a beat restarted from an old state) starts one
workflow: the start's Idempotency-Key names the schedule and the period."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from approvals import clock
from approvals.models import StartRequest, StartSchedule, User, Workflow
from approvals.services.schedules import (
    schedule_key,
    schedule_plan,
    schedule_start,
    schedules_start_due,
)
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import TEMPLATE_NOT_FOUND
from approvals.workers import tasks
from approvals.workers.jobs import PERIODIC_JOBS

from ..concurrency.support import race

QUARTERLY = "0 9 1 1,4,7,10 *"  # 09:00 on the first day of each quarter
REVIEW = {
    "key": "access-review",
    "title": "Access review",
    "steps": [{"id": "it", "kind": "approval", "approvers": [{"user": "ivan"}]}],
}
JAN_1 = dt.datetime(2027, 1, 1, 3, 30, tzinfo=dt.UTC)  # 09:00 in Kolkata


def _schedule(tenant: Any, **fields: Any) -> StartSchedule:
    workflow_template_publish(tenant=tenant, definition=REVIEW)
    values = {
        "tenant": tenant,
        "name": "Quarterly access review",
        "template_key": "access-review",
        "subject_type": "access-review",
        "data": {"scope": "all systems"},
        "submitter": User.objects.get(username="olga"),
        "owner": User.objects.get(username="olga"),
        "cron": QUARTERLY,
        "timezone": "Asia/Kolkata",
    }
    schedule = StartSchedule(**{**values, **fields})
    schedule_plan(schedule=schedule, now=JAN_1 - dt.timedelta(days=1))
    schedule.save()
    return schedule


def _fire(at: dt.datetime) -> list[Any]:
    with clock.shifted(at - clock.now()):
        return schedules_start_due()


@pytest.mark.django_db
def test_a_due_period_starts_one_workflow_with_the_schedules_data(acme):
    # given
    schedule = _schedule(acme)
    assert schedule.next_due_at == JAN_1

    # when the job runs after the period is due
    [run] = _fire(JAN_1 + dt.timedelta(seconds=20))

    # then
    wf = Workflow.objects.get()
    assert run.workflow_id == wf.pk and run.due_at == JAN_1 and not run.replayed
    assert (wf.template_key, wf.subject_type, wf.subject_id) == (
        "access-review",
        "access-review",
        "2027-01-01T09:00",
    )
    assert wf.data == {"scope": "all systems"}
    assert wf.submitter.username == "olga"
    assert wf.public_status == "PENDING_IT"
    schedule.refresh_from_db()
    assert schedule.next_due_at == dt.datetime(2027, 4, 1, 3, 30, tzinfo=dt.UTC)
    assert (schedule.last_due_at, schedule.last_workflow_id, schedule.last_error) == (
        JAN_1,
        wf.pk,
        "",
    )


@pytest.mark.django_db
def test_nothing_starts_before_the_period_is_due(acme):
    _schedule(acme)
    assert _fire(JAN_1 - dt.timedelta(seconds=1)) == []
    assert not Workflow.objects.exists()


@pytest.mark.django_db
def test_one_period_fired_twice_starts_one_workflow(acme):
    # given a period started by one beat
    schedule = _schedule(acme)
    [first] = _fire(JAN_1 + dt.timedelta(seconds=5))

    # when a second beat, restarted from a state before that start, fires it again
    StartSchedule.objects.filter(pk=schedule.pk).update(next_due_at=JAN_1)
    [second] = _fire(JAN_1 + dt.timedelta(seconds=40))

    # then the second start replays the first: one workflow, one key
    assert second.replayed and second.workflow_id == first.workflow_id
    assert Workflow.objects.count() == 1
    key = schedule_key(schedule_id=schedule.pk, due_at=JAN_1)
    assert StartRequest.objects.filter(key=key).count() == 1


@pytest.mark.django_db
def test_starting_a_period_directly_twice_replays_the_first(acme):
    schedule = _schedule(acme)
    first = schedule_start(schedule=schedule, due_at=JAN_1)
    again = schedule_start(schedule=schedule, due_at=JAN_1)
    following = schedule_start(schedule=schedule, due_at=JAN_1 + dt.timedelta(days=90))

    assert again.replayed and again.workflow_id == first.workflow_id
    assert following.workflow_id != first.workflow_id
    assert Workflow.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_beats_at_once_start_one_workflow(acme):
    _schedule(acme)

    runs = race([lambda: _fire(JAN_1 + dt.timedelta(seconds=5))] * 4)

    assert sum(len(r) for r in runs) >= 1
    assert Workflow.objects.count() == 1
    assert StartRequest.objects.count() == 1


@pytest.mark.django_db
def test_a_beat_that_was_down_starts_only_the_latest_missed_period(acme):
    _schedule(acme)

    [run] = _fire(dt.datetime(2027, 8, 1, tzinfo=dt.UTC))

    assert run.due_at == dt.datetime(2027, 7, 1, 3, 30, tzinfo=dt.UTC)
    assert Workflow.objects.get().subject_id == "2027-07-01T09:00"
    assert StartSchedule.objects.get().next_due_at == dt.datetime(2027, 10, 1, 3, 30, tzinfo=dt.UTC)


@pytest.mark.django_db
def test_a_refused_start_is_kept_on_the_schedule_and_the_schedule_moves_on(acme):
    schedule = _schedule(acme, template_key="no-such-template")

    [run] = _fire(JAN_1 + dt.timedelta(seconds=5))

    assert run.workflow_id is None
    assert run.error == TEMPLATE_NOT_FOUND.format(key="no-such-template")
    schedule.refresh_from_db()
    assert schedule.last_error == run.error
    assert schedule.next_due_at > JAN_1
    assert not Workflow.objects.exists()


@pytest.mark.django_db
def test_a_disabled_schedule_starts_nothing(acme):
    _schedule(acme, enabled=False)
    assert _fire(JAN_1 + dt.timedelta(days=1)) == []
    assert not Workflow.objects.exists()


@pytest.mark.django_db
def test_the_periodic_job_runs_the_schedules(acme):
    _schedule(acme)
    job = next(j for j in PERIODIC_JOBS if j.name == "start-scheduled")

    with clock.shifted(JAN_1 + dt.timedelta(seconds=5) - clock.now()):
        started = tasks.PERIODIC_TASKS[job.task]()

    assert started == 1
    assert Workflow.objects.count() == 1
