"""Celery tasks. Each fetches by id and calls a worker function; no logic lives here.
Their names are what queued messages and beat entries carry: never change them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections

from ..audit.archive_job import months_archive_due
from ..audit.daily_seal import daily_seals_due
from ..audit.seal import seal_all
from ..notifications.tasks import send_digests, sweep_mail
from ..runtime.partitions import history_partitions_ensure
from ..runtime.rollup import rollup_fold
from ..runtime.statistics import statistics_refresh
from ..services.directory import stragglers_hand_on
from ..services.draft_sweep import draft_files_sweep
from ..services.held_decisions import held_release_due
from ..services.schedules import schedules_start_due
from .activities import attempt_run, attempt_sweep
from .timers import timer_drain, timer_prune


@shared_task(name="approvals.run_activity", acks_late=True, reject_on_worker_lost=True)
def run_activity(attempt_id: int) -> None:
    close_old_connections()  # the worker reuses connections; drop one that broke
    attempt_run(attempt_id=attempt_id)


@shared_task(name="approvals.poll_timers", ignore_result=True)
def poll_timers() -> int:
    return timer_drain()


@shared_task(name="approvals.release_held_decisions", ignore_result=True)
def release_held_decisions() -> int:
    return held_release_due()


@shared_task(name="approvals.sweep_activities", ignore_result=True)
def sweep_activities() -> dict[str, int]:
    return attempt_sweep()


@shared_task(name="approvals.prune_fired_timers", ignore_result=True)
def prune_fired_timers() -> int:
    return timer_prune(older_than=dt.timedelta(days=settings.APPROVALS_FIRED_TIMER_RETENTION_DAYS))


@shared_task(name="approvals.fold_analytics", ignore_result=True)
def fold_analytics() -> int:
    """Sum the step visits not yet counted (and the retractions) into the analytics
    rollup, a batch per transaction (runtime.rollup)."""
    return rollup_fold()


# What each periodic job (workers/jobs.py) runs, by task name: the embedded scheduler
# calls these in-process, beat sends the same names to the workers.
@shared_task(name="approvals.refresh_statistics", ignore_result=True)
def refresh_statistics() -> int:
    """ANALYZE the command path's tables that have outgrown their statistics, as a
    young database's do (runtime.statistics). Returns how many."""
    return len(statistics_refresh())


@shared_task(name="approvals.seal_audit", ignore_result=True)
def seal_audit() -> int:
    """The next seal of every organisation whose chain heads moved since its last one
    (approvals.audit.seal), every APPROVALS_AUDIT_SEAL_INTERVAL_SECONDS; and each day
    over and not yet sealed, one daily seal per organisation (approvals.audit.daily_seal)."""
    return len(seal_all(only_changed=True)) + len(daily_seals_due())


@shared_task(name="approvals.history_partitions", ignore_result=True)
def history_partitions() -> int:
    """The events' partitions of this month and the next few (runtime.partitions)."""
    return len(history_partitions_ensure())


@shared_task(name="approvals.hand_on_tasks", ignore_result=True)
def hand_on_tasks() -> int:
    """Tasks still held by deactivated people go to their manager (services.directory)."""
    return stragglers_hand_on()


@shared_task(name="approvals.start_scheduled", ignore_result=True)
def start_scheduled() -> int:
    """Start the due periods of the organisations' start schedules."""
    return len(schedules_start_due())


@shared_task(name="approvals.sweep_draft_files", ignore_result=True)
def sweep_draft_files() -> int:
    """Delete stored draft files no draft keeps, past the grace period (services.draft_sweep)."""
    return len(draft_files_sweep().removed)


@shared_task(name="approvals.archive_history", ignore_result=True)
def archive_history() -> int:
    """Archive and drop the months past every organisation's live window and held by
    none (approvals.audit.archive); one run at a time. Returns the months archived."""
    return len(months_archive_due().archived)


PERIODIC_TASKS: dict[str, Callable[[], Any]] = {
    task.name: task
    for task in (
        poll_timers,
        release_held_decisions,
        sweep_activities,
        prune_fired_timers,
        fold_analytics,
        refresh_statistics,
        sweep_mail,
        send_digests,
        seal_audit,
        hand_on_tasks,
        history_partitions,
        start_scheduled,
        sweep_draft_files,
        archive_history,
    )
}
