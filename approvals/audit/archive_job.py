"""The periodic job archive-history: every month that may leave the live database,
archived and dropped, oldest first, one run at a time.

Each month goes through approvals.audit.archive's ``month_archive``, which a kill at any
point leaves either live or archived and the next run finishes; whether a month may go
is approvals.audit.retention's answer."""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field

from django.db import connection

from .. import clock
from ..runtime.partitions import EVENTS
from .archive import month_archive
from .archived_index import archived_delete_expired
from .models import ArchivedMonth
from .retention import ArchiveError, ArchiveRefused, month_due, month_words

logger = logging.getLogger(__name__)
JOB_LOCK = "archive:job"
_PARTITION_NAME = re.compile(rf"^{EVENTS}_p(\d{{4}})(\d{{2}})$")


@dataclass
class DueRun:
    """What one run of the job did: the months it archived, the months it left live
    and why (in words), and whether another run held the job."""

    archived: list[dt.date] = field(default_factory=list)
    kept: dict[dt.date, list[str]] = field(default_factory=dict)
    # (organisation, month) -> workflows whose archived history retention deleted
    deleted: dict[tuple[int, dt.date], int] = field(default_factory=dict)
    busy: bool = False


def months_archive_due() -> DueRun:
    """The job archive-history: archive and drop, oldest first, every month past the
    live window of all its workflows' organisations and held by none, and finish the
    months a stopped run left half-way (detached, or dropped but not recorded). One run
    at a time (a session advisory lock); a second returns at once with ``busy``. Each
    month goes through ``month_archive``, which a kill at any point leaves either live
    or archived, and the next run finishes. Then the archived months retention lets go
    are deleted from the store, each workflow leaving a tombstone
    (``archived_index.archived_delete_expired``).

    A partition holds a month of every organisation (the events are partitioned by
    month alone), so a month leaves when it may leave for all of them: one held
    organisation keeps the month live for the others too."""
    run = DueRun()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtext(%s))", [JOB_LOCK])
        if not cursor.fetchone()[0]:
            run.busy = True
            return run
    try:
        now = clock.now()
        for month in _months_to_look_at():
            if not month_due(month, now=now):
                continue
            try:
                month_archive(month)
            except ArchiveRefused as refused:
                run.kept[month] = refused.reasons
                continue
            except ArchiveError as exc:  # another run holds the month; a bad archive
                run.kept[month] = [str(exc)]
                logger.warning("history archive: %s stays live: %s", month_words(month), exc)
                continue
            run.archived.append(month)
            logger.info("history archive: %s archived and dropped", month_words(month))
        # then what retention lets go: archived objects deleted, tombstones left
        run.deleted = archived_delete_expired().deleted
        for (tenant_id, month), count in run.deleted.items():
            logger.info(
                "history archive: %s of organisation %s deleted after its retention"
                " (%s tombstones)",
                month_words(month),
                tenant_id,
                count,
            )
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s))", [JOB_LOCK])
    return run


def _months_to_look_at() -> list[dt.date]:
    """Every month with a partition (attached or left detached by a stopped run) or an
    archive not yet recorded as dropped, oldest first; this month and later excluded."""
    this_month = clock.now().astimezone(dt.UTC).date().replace(day=1)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relkind IN ('r', 'p') AND relname LIKE %s",
            [f"{EVENTS}_p%"],
        )
        names = [row[0] for row in cursor.fetchall()]
    months = {dt.date(int(m[1]), int(m[2]), 1) for n in names if (m := _PARTITION_NAME.match(n))}
    months.update(ArchivedMonth.objects.filter(dropped_at=None).values_list("month", flat=True))
    return sorted(m for m in months if m < this_month)
