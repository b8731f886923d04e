"""Scheduled starts (``StartSchedule``): the periodic job ``start-scheduled`` starts
each schedule's due period through ``workflow_start``.

A period is started once: the start carries the Idempotency-Key
``schedule:<id>:<due time in UTC>``, so a second fire of the same period (two beats
running, a beat restarted from an old schedule file, a row read before another
process advanced it) replays the first start instead of starting another. The row
lock (``FOR UPDATE SKIP LOCKED``) only keeps two processes from doing the same work."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from templates_engine import CommandRejected

from .. import access, clock
from ..models import StartSchedule, User
from ..models.schedules import SUBJECT_DUE
from ..runtime import tenant_scope
from ..runtime.commands import Busy
from .cron import Cron, CronInvalid
from .workflows import (
    IdempotencyKeyReused,
    StartResult,
    SubjectTaken,
    TemplateNotFound,
    workflow_start,
)

log = logging.getLogger(__name__)

# A beat that was down for a long time starts the latest period it missed, not each
# one; this many steps through the schedule are enough for a minutely one down a week.
_MAX_MISSED = 20_000


class ScheduleRefused(Exception):
    """The schedule may not file requests now (kept in ``last_error``)."""


SCHEDULE_NO_OWNER = (
    "Nobody is recorded as having made this schedule, so it files no requests: save it "
    "again to make its requests yours."
)
SCHEDULE_NOT_OWNERS = (
    "This schedule files requests in the name of someone other than {owner}, who made "
    "it; a schedule files requests only in its maker's name."
)
SCHEDULE_OWNER_GONE = (
    "{owner}, who made this schedule, can no longer file requests; someone else must "
    "save it again to make its requests theirs."
)
_REFUSALS = (
    ScheduleRefused,
    TemplateNotFound,
    access.Forbidden,
    CommandRejected,
    SubjectTaken,
    IdempotencyKeyReused,
)


@dataclass(frozen=True)
class ScheduledStart:
    schedule_id: int
    due_at: dt.datetime
    workflow_id: uuid.UUID | None
    replayed: bool = False
    error: str = ""


def schedule_key(*, schedule_id: int, due_at: dt.datetime) -> str:
    """The Idempotency-Key of one period of one schedule."""
    return f"schedule:{schedule_id}:{due_at.astimezone(dt.UTC):%Y-%m-%dT%H:%MZ}"


def schedule_cron(schedule: StartSchedule) -> Cron:
    """The schedule's cron expression read in its time zone. Raises CronInvalid."""
    return Cron.parse(schedule.cron, schedule.timezone)


def schedule_plan(*, schedule: StartSchedule, now: dt.datetime | None = None) -> None:
    """Set the next period to start after ``now`` (a new or changed schedule). Raises
    CronInvalid."""
    schedule.next_due_at = schedule_cron(schedule).next_after(now or clock.now())


def schedule_check_submitter(*, schedule: StartSchedule) -> None:
    """Raise ScheduleRefused unless the schedule files its requests in the name of the
    person who made it (``owner``), an active member of its organisation: nobody files
    a request in someone else's name."""
    owner = schedule.owner
    if owner is None:
        raise ScheduleRefused(SCHEDULE_NO_OWNER)
    if owner.pk != schedule.submitter_id:
        raise ScheduleRefused(SCHEDULE_NOT_OWNERS.format(owner=_name(owner)))
    if not owner.is_active or owner.tenant_id != schedule.tenant_id:
        raise ScheduleRefused(SCHEDULE_OWNER_GONE.format(owner=_name(owner)))


def _name(person: User) -> str:
    return person.get_full_name() or person.username


def schedule_origin(schedule: StartSchedule) -> dict[str, Any]:
    """What the history of a scheduled start records about where it came from."""
    assert schedule.owner is not None
    return {"schedule": schedule.pk, "name": schedule.name, "made_by": schedule.owner.username}


def schedule_start(*, schedule: StartSchedule, due_at: dt.datetime) -> StartResult:
    """Start the period of ``schedule`` due at ``due_at``, once (see the module doc),
    in the name of the person who made the schedule; the WorkflowStarted event records
    the schedule and its maker. Raises ScheduleRefused (``schedule_check_submitter``)
    and what ``workflow_start`` raises."""
    schedule_check_submitter(schedule=schedule)
    local = due_at.astimezone(schedule_cron(schedule).zone)
    subject_id = schedule.subject_id.replace(SUBJECT_DUE, f"{local:%Y-%m-%dT%H:%M}")
    return workflow_start(
        origin=schedule_origin(schedule),
        submitter=schedule.submitter,
        template_key=schedule.template_key,
        subject_type=schedule.subject_type,
        subject_id=subject_id,
        data=dict(schedule.data),
        idempotency_key=schedule_key(schedule_id=schedule.pk, due_at=due_at),
    )


def schedules_start_due(
    *, now: dt.datetime | None = None, limit: int = 100
) -> list[ScheduledStart]:
    """Start every enabled schedule's due period; each schedule moves on to its next
    period whether its start succeeded or was refused (the refusal is kept in
    ``last_error``), except when the workflow was busy."""
    now = now or clock.now()
    due = StartSchedule.objects.filter(enabled=True, next_due_at__lte=now)
    runs = []
    for pk in list(due.order_by("next_due_at").values_list("pk", flat=True)[:limit]):
        with transaction.atomic():
            schedule = (
                StartSchedule.objects.select_for_update(skip_locked=True, of=("self",))
                .select_related("submitter", "owner")
                .filter(pk=pk, enabled=True, next_due_at__lte=now)
                .first()
            )
            if schedule is None:
                continue  # another process has it, or has started it already
            # Claimed across organisations; started and moved on acting for its own.
            with tenant_scope.acting_for(schedule.tenant_id):
                run = _fire(schedule, now)
            if run is not None:
                runs.append(run)
    return runs


def _fire(schedule: StartSchedule, now: dt.datetime) -> ScheduledStart | None:
    try:
        cron = schedule_cron(schedule)
    except CronInvalid as exc:
        schedule.enabled, schedule.last_error = False, str(exc)
        schedule.save(update_fields=["enabled", "last_error"])
        return None
    assert schedule.next_due_at is not None
    due_at = schedule.next_due_at
    for _ in range(_MAX_MISSED):
        following = cron.next_after(due_at)
        if following > now:
            break
        due_at = following
    run = ScheduledStart(schedule.pk, due_at, None)
    try:
        started = schedule_start(schedule=schedule, due_at=due_at)
        run = ScheduledStart(schedule.pk, due_at, started.workflow_id, started.replayed)
    except Busy:
        return None  # not advanced: the next run tries this period again
    except _REFUSALS as exc:
        log.warning("schedule %s could not start its period %s: %s", schedule.pk, due_at, exc)
        run = ScheduledStart(schedule.pk, due_at, None, error=str(exc))
    schedule.last_due_at = due_at
    schedule.next_due_at = cron.next_after(due_at)
    schedule.last_error = run.error
    if run.workflow_id is not None:
        schedule.last_workflow_id = run.workflow_id
    schedule.save(update_fields=["last_due_at", "next_due_at", "last_error", "last_workflow"])
    return run
