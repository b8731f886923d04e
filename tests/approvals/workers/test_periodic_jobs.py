"""One list of periodic jobs: Celery beat's schedule and the embedded scheduler loop
both come from approvals/workers/jobs.py, so pruning fired timers runs under both."""

from __future__ import annotations

import datetime as dt

from django.conf import settings

from approvals import clock
from approvals.models import Timer
from approvals.workers import tasks
from approvals.workers.jobs import PERIODIC_JOBS, beat_schedule
from approvals.workers.scheduler import scheduler_tick
from approvals.workers.timers import timer_drain

from ..helpers import start_expense

DAY = dt.timedelta(days=1)


def test_beat_runs_every_periodic_job_under_its_task_name() -> None:
    beat = settings.CELERY_BEAT_SCHEDULE

    assert {name: entry["task"] for name, entry in beat.items()} == {
        "poll-timers": "approvals.poll_timers",
        "release-held-decisions": "approvals.release_held_decisions",
        "sweep-activities": "approvals.sweep_activities",
        "start-scheduled": "approvals.start_scheduled",
        "prune-fired-timers": "approvals.prune_fired_timers",
        "fold-analytics": "approvals.fold_analytics",
        "refresh-statistics": "approvals.refresh_statistics",
        "sweep-mail": "approvals.sweep_mail",
        "send-digests": "approvals.send_digests",
        "seal-audit": "approvals.seal_audit",
        "hand-on-tasks": "approvals.hand_on_tasks",
        "history-partitions": "approvals.history_partitions",
        "sweep-draft-files": "approvals.sweep_draft_files",
        "archive-history": "approvals.archive_history",
    }
    assert beat["poll-timers"]["schedule"] == float(settings.APPROVALS_POLL_INTERVAL_SECONDS)
    assert beat["prune-fired-timers"]["schedule"] == float(
        settings.APPROVALS_PRUNE_INTERVAL_SECONDS
    )


def test_every_job_names_a_task_the_workers_define() -> None:
    assert {job.task for job in PERIODIC_JOBS} == set(tasks.PERIODIC_TASKS)
    assert all(name == task.name for name, task in tasks.PERIODIC_TASKS.items())


def test_a_missing_interval_takes_the_jobs_default() -> None:
    schedule = beat_schedule({"APPROVALS_POLL_INTERVAL_SECONDS": 9})

    assert schedule["poll-timers"]["schedule"] == 9.0
    assert schedule["sweep-activities"]["schedule"] == 5.0
    assert schedule["prune-fired-timers"]["options"] == {"queue": "scheduler", "expires": 30}


def test_the_beat_task_prunes_fired_timers_past_the_retention(acme, api) -> None:
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 1  # the reminder fires; the deadline stays pending
    retention = settings.APPROVALS_FIRED_TIMER_RETENTION_DAYS * DAY

    with clock.shifted(retention - DAY):
        assert tasks.prune_fired_timers() == 0
    with clock.shifted(retention + 2 * DAY):
        assert tasks.prune_fired_timers() == 1

    assert list(Timer.objects.filter(workflow_id=wid).values_list("kind", "fired_at")) == [
        ("deadline", None)
    ]


def test_the_embedded_loop_runs_every_job_of_the_list(acme, api) -> None:
    start_expense(api("alice"), 4_500_000)

    results = scheduler_tick()

    assert list(results) == [job.name for job in PERIODIC_JOBS]
    assert results["poll-timers"] == 0  # nothing is due yet
    assert results["prune-fired-timers"] == 0
    assert Timer.objects.count() == 2


def test_the_embedded_loop_runs_each_job_at_its_own_interval(monkeypatch, settings) -> None:
    import threading

    from approvals.workers import scheduler

    ran: dict[str, int] = {}
    for name in list(tasks.PERIODIC_TASKS):
        monkeypatch.setitem(
            tasks.PERIODIC_TASKS,
            name,
            lambda name=name: ran.__setitem__(name, ran.get(name, 0) + 1),
        )
    settings.APPROVALS_POLL_INTERVAL_SECONDS = 0  # every tick
    stop = threading.Event()
    thread = threading.Thread(
        target=scheduler.scheduler_loop, kwargs={"stop": stop, "interval": 0.01}
    )

    thread.start()
    while ran.get("approvals.poll_timers", 0) < 5:
        stop.wait(0.01)
    stop.set()
    thread.join()

    # the daily jobs wait a whole interval after the start, as under beat
    assert ran.get("approvals.seal_audit", 0) == 0
    assert ran.get("approvals.send_digests", 0) == 0
    assert ran.get("approvals.prune_fired_timers", 0) == 0
