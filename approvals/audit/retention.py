"""Retention and legal holds: who and what may leave the live database, and when.

Two spans per organisation (``RetentionPolicy``, else the deployment's settings):
- the live window (``APPROVALS_LIVE_MONTHS``: twelve months): how long after it
  finishes a workflow's history stays in the live database;
- the retention (``APPROVALS_RETENTION_YEARS``: seven years): how long after it finishes
  it is kept at all, in the database or the archive.
A legal hold (``LegalHold``, set by an auditor or an organisation admin with a reason,
append-only and signed with the seal key) on a workflow or on its whole organisation
keeps its history live whatever the spans say. A month's partition (every event carries
the month its workflow started, migration 0029) may leave the live database when every
workflow of it finished more than its organisation's live window ago and none is held;
otherwise ``month_refusals`` says, in words, which workflows keep it.

Retention governs deleting an archived month, not archiving it: ``deletable`` answers
whether one organisation's archived month may be deleted (what deletes it is another
part); ``kept_until`` is the date the archive's objects are locked until.

The archiver (approvals.audit.archive) asks this module; restoring
(approvals.audit.restore) asks nothing of it."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q

from templates_engine.status import TERMINAL

from .. import access, clock
from ..models import Tenant, User, Workflow
from ..runtime import tenant_scope
from ..runtime.partitions import month_add
from .models import ArchivedMonth, LegalHold, RetentionPolicy
from .seal import key_id, seal_key

HOLD_FORMAT = "approvals-legal-hold-v1"
_CHUNK = 2000
REFUSALS_KEPT = 100  # refusals month_refusals keeps before counting the rest

BAD_MONTH = "The month must be written YYYY-MM, such as 2019-03 ({text!r} is not)."
NOT_PAST = "{month} has not ended yet: only a past month can be archived."
HOLD_WHO = "Only an auditor or an organisation admin may put or take off a legal hold."
HOLD_REASON = "Say why: a legal hold needs a reason."
HOLD_OTHER = "That workflow is not one of your organisation's."
RUNNING = "{wf} is still running"
LIVE = (
    "{wf} finished on {finished:%d %B %Y} and stays live until {until:%d %B %Y} "
    "(its organisation's live window of {window})"
)
KEPT = (
    "{month} of {tenant} is kept until {until:%d %B %Y} ({years} after its last workflow finished)"
)
NOT_DROPPED = "{month} of {tenant} is still in the live database: it is not archived."
RETENTION_RANGE = "Retention is a whole number of years from 1 to 100."
WINDOW_RANGE = (
    "The live window is a whole number of months from 1 to the retention ({most} months)."
)
HELD = "{wf} is on legal hold since {at:%d %B %Y}, put by {by}: {reason}"
TENANT_HELD = "{tenant} is on legal hold since {at:%d %B %Y}, put by {by}: {reason}"


class ArchiveError(Exception):
    """A request the archive refuses, said in words; nothing was changed."""


class ArchiveRefused(ArchiveError):
    def __init__(self, month: dt.date, reasons: list[str]) -> None:
        self.reasons = reasons
        lines = "".join(f"\n- {r}" for r in reasons)
        super().__init__(f"{month_words(month)} cannot be archived yet:{lines}")


def month_words(month: dt.date) -> str:
    return f"{month:%B %Y}"


def month_parse(text: str) -> dt.date:
    try:
        return dt.datetime.strptime(text.strip(), "%Y-%m").date()
    except ValueError:
        raise ArchiveError(BAD_MONTH.format(text=text)) from None


# -- retention and legal holds -----------------------------------------------------------


def retention_years(tenant_id: int) -> int:
    return spans(tenant_id)[0]


def live_months(tenant_id: int) -> int:
    return spans(tenant_id)[1]


def spans(tenant_id: int) -> tuple[int, int]:
    """(retention in years, live window in months) of one organisation."""
    policy = RetentionPolicy.objects.filter(tenant_id=tenant_id).first()
    years = policy.years if policy is not None else int(settings.APPROVALS_RETENTION_YEARS)
    window = policy.live_months if policy is not None else None
    return years, int(settings.APPROVALS_LIVE_MONTHS) if window is None else window


@dataclass(frozen=True)
class RetentionChange:
    """A retention set, and what it did to the archive's locks, in words ("" when the
    organisation has nothing archived)."""

    policy: RetentionPolicy
    locks: str


def retention_set(
    *, tenant: Tenant, by: str, years: int | None = None, live_months: int | None = None
) -> RetentionPolicy:
    """Set an organisation's retention and/or live window (``retention_change``)."""
    return retention_change(tenant=tenant, by=by, years=years, live_months=live_months).policy


@tenant_scope.atomic_for_tenant_of("tenant")
def retention_change(
    *, tenant: Tenant, by: str, years: int | None = None, live_months: int | None = None
) -> RetentionChange:
    """Set an organisation's retention (years after a workflow finishes) and/or its
    live window (months after it finishes that it stays in the live database). The
    window is at least a month and at most the retention. A longer retention extends
    the archive's Object Locks to its new end, in the same transaction (a store that
    refuses leaves the retention as it was); a shorter one leaves them as they are
    (approvals.audit.object_lock)."""
    from . import object_lock

    current_years, current_window = spans(tenant.pk)
    years = current_years if years is None else years
    window = current_window if live_months is None else live_months
    if not 1 <= years <= 100:
        raise ArchiveError(RETENTION_RANGE)
    if not 1 <= window <= years * 12:
        raise ArchiveError(WINDOW_RANGE.format(most=years * 12))
    policy, _ = RetentionPolicy.objects.update_or_create(
        tenant=tenant,
        defaults={"years": years, "live_months": window, "set_by": by, "set_at": clock.now()},
    )
    if years == current_years:
        return RetentionChange(policy, "")
    if years < current_years:
        return RetentionChange(policy, object_lock.locks_kept(tenant.pk))
    try:
        words = object_lock.locks_extend(
            tenant.pk, kept_until=lambda last: _years_after(last, years)
        )
    except object_lock.LockRefused as exc:
        raise ArchiveError(str(exc)) from None
    return RetentionChange(policy, words)


def _years_after(at: dt.datetime, years: int) -> dt.datetime:
    try:
        return at.replace(year=at.year + years)
    except ValueError:  # 29 February
        return at.replace(year=at.year + years, day=28)


def _months_after(at: dt.datetime, months: int) -> dt.datetime:
    moved = month_add(at.date().replace(day=1), months)
    last_day = (month_add(moved, 1) - dt.timedelta(days=1)).day
    return at.replace(year=moved.year, month=moved.month, day=min(at.day, last_day))


def kept_until(tenant_id: int, last_finished: dt.datetime) -> dt.datetime:
    """The end of the retention of history whose last workflow finished at
    ``last_finished``: when an archive of it may be deleted (a hold aside), and the
    date its objects are locked until."""
    return _years_after(last_finished, retention_years(tenant_id))


def hold_signature(*, key: bytes, hold: LegalHold) -> str:
    message = "\n".join(
        (
            HOLD_FORMAT,
            str(hold.tenant_id),
            str(hold.workflow_id or "*"),
            hold.action,
            hold.by,
            hold.at.isoformat(),
            hold.reason,
        )
    ).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def hold_verifies(hold: LegalHold, *, key: bytes) -> bool:
    expected = hold_signature(key=key, hold=hold)
    return hold.key_id == key_id(key) and hmac.compare_digest(expected, hold.signature)


@tenant_scope.atomic_for_tenant_of("by")
def hold_set(
    *,
    by: User,
    reason: str,
    workflow_id: uuid.UUID | str | None = None,
    release: bool = False,
) -> LegalHold:
    """Put (or, with ``release``, take off) a legal hold on one workflow of ``by``'s
    organisation, or on the whole organisation when no workflow is named."""
    if by.tenant_id is None or not (
        access.has_role(by, access.Role.AUDITOR) or access.has_role(by, access.Role.ORG_ADMIN)
    ):
        raise ArchiveError(HOLD_WHO)
    if not reason.strip():
        raise ArchiveError(HOLD_REASON)
    if workflow_id is not None:
        try:
            workflow_id = uuid.UUID(str(workflow_id))
        except ValueError:
            raise ArchiveError(HOLD_OTHER) from None
        if not Workflow.objects.filter(pk=workflow_id, tenant_id=by.tenant_id).exists():
            raise ArchiveError(HOLD_OTHER)
    key = seal_key()
    hold = LegalHold(
        tenant_id=by.tenant_id,
        workflow_id=workflow_id,
        action=LegalHold.RELEASE if release else LegalHold.HOLD,
        by=by.username,
        at=clock.now(),
        reason=reason.strip(),
        key_id=key_id(key),
    )
    hold.signature = hold_signature(key=key, hold=hold)
    with transaction.atomic():
        hold.save()
        _holds_on_objects(by.tenant_id)
    return hold


def _holds_on_objects(tenant_id: int) -> None:
    """The archive's objects of the organisation carry the legal holds in force
    (approvals.audit.object_lock); a store that refuses undoes the hold just saved."""
    from . import object_lock

    holds = holds_in_force({tenant_id})
    try:
        object_lock.legal_holds_sync(
            tenant_id,
            organisation_held=(tenant_id, None) in holds,
            held_workflows={w for t, w in holds if t == tenant_id and w is not None},
        )
    except object_lock.LockRefused as exc:
        raise ArchiveError(str(exc)) from None


def holds_in_force(tenant_ids: set[int]) -> dict[tuple[int, str | None], LegalHold]:
    """(tenant, workflow id or None for the organisation) -> the hold in force. A
    release whose signature does not verify (written without the key) releases
    nothing; a hold is a hold however it was written."""
    key = seal_key()
    latest: dict[tuple[int, str | None], LegalHold] = {}
    for hold in LegalHold.objects.filter(tenant_id__in=tenant_ids).order_by("at", "id"):
        if hold.action != LegalHold.HOLD and not hold_verifies(hold, key=key):
            continue
        target = (hold.tenant_id, str(hold.workflow_id) if hold.workflow_id else None)
        latest[target] = hold
    return {k: v for k, v in latest.items() if v.action == LegalHold.HOLD}


# -- whether a month may go --------------------------------------------------------------


def month_bounds(month: dt.date) -> tuple[dt.datetime, dt.datetime]:
    start = dt.datetime(month.year, month.month, 1, tzinfo=dt.UTC)
    end_month = month_add(month, 1)
    return start, dt.datetime(end_month.year, end_month.month, 1, tzinfo=dt.UTC)


def _workflow_words(wf: Mapping[str, Any]) -> str:
    return f"{wf['subject_type']} {wf['subject_id']} (workflow {wf['id']})"


def month_refusals(month: dt.date) -> list[str]:
    """Why ``month`` cannot be archived now, one reason a line (the first
    ``REFUSALS_KEPT``, then how many more); empty when it can. The month's workflows
    are read as a stream, each with its last event's time, so memory holds the reasons
    kept, not the month."""
    start, end = month_bounds(month)
    now = clock.now()
    if end > now:
        return [NOT_PAST.format(month=month_words(month))]
    in_month = Workflow.objects.filter(created_at__gte=start, created_at__lt=end)
    tenants = set(in_month.order_by().values_list("tenant_id", flat=True).distinct())
    holds = holds_in_force(tenants)
    windows = {t: live_months(t) for t in tenants}
    reasons: list[str] = []
    more = 0

    def add(reason: str) -> None:
        nonlocal more
        if len(reasons) < REFUSALS_KEPT:
            reasons.append(reason)
        else:
            more += 1

    for tenant in Tenant.objects.filter(pk__in=tenants).order_by("pk"):
        hold = holds.get((tenant.pk, None))
        if hold is not None:
            add(TENANT_HELD.format(tenant=tenant.name, at=hold.at, by=hold.by, reason=hold.reason))
    rows = (
        in_month.order_by("created_at", "pk")
        .annotate(last=Max("events__created_at", filter=Q(events__history_month=month)))
        .values("id", "tenant_id", "status", "subject_type", "subject_id", "last")
    )
    for wf in rows.iterator(chunk_size=_CHUNK):
        words = _workflow_words(wf)
        if wf["status"] not in _TERMINAL:
            add(RUNNING.format(wf=words))
            continue
        hold = holds.get((wf["tenant_id"], str(wf["id"])))
        if hold is not None:
            add(HELD.format(wf=words, at=hold.at, by=hold.by, reason=hold.reason))
        last, window = wf["last"], windows[wf["tenant_id"]]
        if last is not None and (until := _months_after(last, window)) > now:
            add(LIVE.format(wf=words, finished=last, until=until, window=_months(window)))
    if more:
        reasons.append(f"and {more} more")
    return reasons


def _years(n: int) -> str:
    return f"{n} year" if n == 1 else f"{n} years"


def _months(n: int) -> str:
    return f"{n} month" if n == 1 else f"{n} months"


def month_due(month: dt.date, *, now: dt.datetime) -> bool:
    """Whether ``month`` is old enough that the shortest live window may have passed
    for its workflows: a cheap sieve before ``month_refusals`` reads the month's
    workflows (each finished after its month began), never skipping a month that may
    go."""
    shortest = min(
        [int(settings.APPROVALS_LIVE_MONTHS)]
        + [
            m
            for m in RetentionPolicy.objects.exclude(live_months=None).values_list(
                "live_months", flat=True
            )
            if m is not None
        ]
    )
    return _months_after(month_bounds(month)[0], shortest) <= now


# -- whether an archived month may be deleted --------------------------------------------


def deletable(archived: ArchivedMonth, *, now: dt.datetime | None = None) -> list[str]:
    """Why one organisation's archived month may not be deleted yet, one reason a line;
    empty when it may: it has left the live database, its retention has ended (counted
    from its last workflow's finish) and no legal hold is on the organisation or on any
    of the month's workflows. The deleting itself (objects, then a tombstone) is not
    this module's."""
    now = clock.now() if now is None else now
    tenant = Tenant.objects.get(pk=archived.tenant_id)
    month = month_words(archived.month)
    if archived.dropped_at is None:
        return [NOT_DROPPED.format(month=month, tenant=tenant.name)]
    reasons = []
    last = archived.last_finished_at or archived.written_at
    until = kept_until(tenant.pk, last)
    if until > now:
        years = _years(retention_years(tenant.pk))
        reasons.append(KEPT.format(month=month, tenant=tenant.name, until=until, years=years))
    holds = holds_in_force({tenant.pk})
    if (hold := holds.get((tenant.pk, None))) is not None:
        reasons.append(
            TENANT_HELD.format(tenant=tenant.name, at=hold.at, by=hold.by, reason=hold.reason)
        )
    start, end = month_bounds(archived.month)
    in_month = Workflow.objects.filter(
        tenant_id=tenant.pk, created_at__gte=start, created_at__lt=end
    )
    for wf in in_month.order_by("created_at", "pk").values("id", "subject_type", "subject_id"):
        if (hold := holds.get((tenant.pk, str(wf["id"])))) is not None:
            words = _workflow_words(wf)
            reasons.append(HELD.format(wf=words, at=hold.at, by=hold.by, reason=hold.reason))
    return reasons


_TERMINAL = frozenset(str(s) for s in TERMINAL)
