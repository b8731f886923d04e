"""The one list of periodic jobs. Celery beat's schedule is built from it
(config/settings.py ``CELERY_BEAT_SCHEDULE``) and the embedded scheduler loop
(``workers.scheduler``) runs the same jobs, so the two cannot drift apart.

Settings import this module, so it imports nothing of Django or of the app.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PeriodicJob:
    name: str  # the beat entry's name
    task: str  # the Celery task's registered name (see workers/tasks.py)
    interval_setting: str  # the setting holding the seconds between two runs under beat
    default_seconds: int


PERIODIC_JOBS: tuple[PeriodicJob, ...] = (
    PeriodicJob("poll-timers", "approvals.poll_timers", "APPROVALS_POLL_INTERVAL_SECONDS", 2),
    # Decisions held for their undo window, recorded once it has passed
    # (services/held_decisions.py).
    PeriodicJob(
        "release-held-decisions",
        "approvals.release_held_decisions",
        "APPROVALS_HELD_INTERVAL_SECONDS",
        1,
    ),
    PeriodicJob(
        "sweep-activities", "approvals.sweep_activities", "APPROVALS_SWEEP_INTERVAL_SECONDS", 5
    ),
    PeriodicJob(
        "start-scheduled", "approvals.start_scheduled", "APPROVALS_SCHEDULE_INTERVAL_SECONDS", 30
    ),
    PeriodicJob(
        "prune-fired-timers",
        "approvals.prune_fired_timers",
        "APPROVALS_PRUNE_INTERVAL_SECONDS",
        3600,
    ),
    # The analytics rollup: the step visits the commands wrote or changed, summed into
    # its rows (runtime/rollup.py); the page adds what is pending meanwhile.
    PeriodicJob(
        "fold-analytics",
        "approvals.fold_analytics",
        "APPROVALS_ANALYTICS_FOLD_INTERVAL_SECONDS",
        15,
    ),
    # The command path's tables analyzed once they outgrow their statistics, so a young
    # database's plans follow its rows (runtime/statistics.py); a large one's autovacuum
    # is ahead of it and it finds nothing to do.
    PeriodicJob(
        "refresh-statistics",
        "approvals.refresh_statistics",
        "APPROVALS_STATISTICS_INTERVAL_SECONDS",
        60,
    ),
    PeriodicJob("sweep-mail", "approvals.sweep_mail", "APPROVALS_MAIL_SWEEP_INTERVAL_SECONDS", 15),
    # Every few minutes: each person's digest goes at an hour of their own day
    # (notifications/digest.py), so a run finds the people whose hour has just come.
    PeriodicJob("send-digests", "approvals.send_digests", "APPROVALS_DIGEST_INTERVAL_SECONDS", 300),
    # Often, so that what a database superuser could rewrite unseen is minutes of
    # history; only organisations whose chain heads moved get a new seal.
    PeriodicJob("seal-audit", "approvals.seal_audit", "APPROVALS_AUDIT_SEAL_INTERVAL_SECONDS", 600),
    # Tasks a command gave someone while they were being deactivated (it read them as
    # active just before): handed on to their manager like the rest.
    # The events' monthly partitions, created ahead (runtime/partitions.py).
    PeriodicJob(
        "history-partitions",
        "approvals.history_partitions",
        "APPROVALS_HISTORY_PARTITIONS_INTERVAL_SECONDS",
        86400,
    ),
    PeriodicJob(
        "hand-on-tasks", "approvals.hand_on_tasks", "APPROVALS_HAND_ON_INTERVAL_SECONDS", 60
    ),
    # Draft files left in storage by a crash between a commit and their deletion
    # (services/draft_sweep.py).
    PeriodicJob(
        "sweep-draft-files",
        "approvals.sweep_draft_files",
        "APPROVALS_DRAFT_FILES_SWEEP_INTERVAL_SECONDS",
        86400,
    ),
    # Months of history past every organisation's live window, and held by none, written
    # to the archive store and dropped (audit/archive_job.py); one run at a time.
    PeriodicJob(
        "archive-history",
        "approvals.archive_history",
        "APPROVALS_ARCHIVE_INTERVAL_SECONDS",
        86400,
    ),
)

# Under beat, a run that waited this long in the queue is dropped: the next one comes.
_EXPIRES_SECONDS = 30


def beat_schedule(intervals: Mapping[str, int | float]) -> dict[str, dict[str, Any]]:
    """``CELERY_BEAT_SCHEDULE`` for ``PERIODIC_JOBS``; ``intervals`` maps each job's
    ``interval_setting`` to its seconds (a missing one takes the job's default)."""
    return {
        job.name: {
            "task": job.task,
            "schedule": float(intervals.get(job.interval_setting, job.default_seconds)),
            "options": {"queue": "scheduler", "expires": _EXPIRES_SECONDS},
        }
        for job in PERIODIC_JOBS
    }
