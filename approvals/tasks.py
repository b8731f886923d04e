"""Celery tasks. Each fetches by id and calls a service; no logic lives here."""

from __future__ import annotations

from celery import shared_task
from django.db import close_old_connections

from .services.activities import attempt_run, attempt_sweep
from .services.timers import timer_drain


@shared_task(name="approvals.run_activity", acks_late=True, reject_on_worker_lost=True)
def run_activity(attempt_id: int) -> None:
    close_old_connections()  # the worker reuses connections; drop one that broke
    attempt_run(attempt_id=attempt_id)


@shared_task(name="approvals.poll_timers", ignore_result=True)
def poll_timers() -> int:
    return timer_drain()


@shared_task(name="approvals.sweep_activities", ignore_result=True)
def sweep_activities() -> dict[str, int]:
    return attempt_sweep()


@shared_task(name="approvals.seal_audit", ignore_result=True)
def seal_audit() -> int:
    """The daily seal of every chain head (approvals.audit.seal)."""
    from .audit.seal import seal_all

    return len(seal_all())
