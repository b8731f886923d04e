"""The daily digest: for each person who chose it, one mail listing the rows that
waited for it, and those rows marked sent. Claimed with a lease as the sender does,
so two digest runs at once never send one person two digests.

It goes out at an hour of the person's own day (``NotificationPreference.digest_hour``,
09:00 unless they chose another, in their zone, else their organisation's, else UTC):
the job runs every few minutes and sends the digests whose hour has come since their
oldest waiting row was written."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Min, Q
from django.template.loader import render_to_string
from django.urls import reverse

from approvals import clock
from approvals.models import User
from approvals.words import zones

from . import metrics
from .bodies import person_zone
from .messages import mail_domain
from .models import DIGEST_HOUR_DEFAULT, TASK_KINDS, MailMessage, MailStatus, NotificationPreference

log = logging.getLogger(__name__)


def _claim(user_id: int, now: dt.datetime) -> list[MailMessage]:
    with transaction.atomic():
        rows = list(
            MailMessage.objects.filter(
                Q(lease_until__isnull=True) | Q(lease_until__lt=now),
                recipient_id=user_id,
                status=MailStatus.PENDING,
                digest=True,
            )
            .order_by("created_at", "pk")
            .select_for_update(skip_locked=True)
        )
        lease = now + dt.timedelta(seconds=settings.APPROVALS_MAIL_LEASE_SECONDS)
        MailMessage.objects.filter(pk__in=[r.pk for r in rows]).update(
            lease_until=lease, attempts=1
        )
    return rows


def _detail(facts: dict[str, Any]) -> str:
    """The why under a digest's line: the person's words (a reason, a note) or the
    sentence that says why (a failed step)."""
    if facts.get("comment"):
        return f'{facts.get("comment_label") or "Comment"}: "{facts["comment"]}"'
    return str(facts.get("why") or "")


def digest_due_at(*, now: dt.datetime, zone: dt.tzinfo, hour: int) -> dt.datetime:
    """The last instant at or before ``now`` at which it was ``hour``:00 in ``zone``. On
    a day whose clocks skip that hour it is when they jump past it; on a day that has
    the hour twice, the first of them (``fold=0``)."""
    today = now.astimezone(zone).date()
    for back in range(3):  # a zone's day is at most 26 hours long
        day = today - dt.timedelta(days=back)
        at = dt.datetime(day.year, day.month, day.day, hour, tzinfo=zone).astimezone(dt.UTC)
        if at <= now:
            return at
    raise AssertionError("a day passed without the hour")  # pragma: no cover


def _due_people(now: dt.datetime) -> list[tuple[User, int]]:
    """The people with digest rows waiting whose hour has come since the oldest of
    them was written, each with their hour."""
    oldest = dict(
        MailMessage.objects.filter(status=MailStatus.PENDING, digest=True)
        .values("recipient_id")
        .annotate(oldest=Min("created_at"))
        .values_list("recipient_id", "oldest")
    )
    hours = dict(
        NotificationPreference.objects.filter(user_id__in=list(oldest)).values_list(
            "user_id", "digest_hour"
        )
    )
    due = []
    for user in User.objects.filter(pk__in=list(oldest)).order_by("pk"):
        hour = hours.get(user.pk, DIGEST_HOUR_DEFAULT)
        if digest_due_at(now=now, zone=person_zone(user), hour=hour) > oldest[user.pk]:
            due.append((user, hour))
    return due


def _item(row: MailMessage, zone: dt.tzinfo, base: str) -> dict[str, Any]:
    facts = row.context or {}
    due_at = facts.get("due_at")
    return {
        "subject": row.subject,
        "detail": _detail(facts),
        "url": base + reverse("workflow", args=[row.workflow_id]),
        "task": row.kind in TASK_KINDS,
        "when": zones.moment(row.created_at, zone),
        "due": zones.moment(clock.from_epoch(due_at), zone) if due_at else "",
    }


def digest_email(
    user: User, rows: list[MailMessage], hour: int = DIGEST_HOUR_DEFAULT
) -> EmailMultiAlternatives:
    """The digest of ``rows`` for ``user``, its times in their zone, named."""
    base = settings.APPROVALS_BASE_URL
    zone = person_zone(user)
    now = clock.now()
    items = [_item(r, zone, base) for r in rows]
    waiting = [i for i in items if i["task"]]
    news = [i for i in items if not i["task"]]
    subject = f"Your approvals digest: {len(waiting)} waiting for you, {len(news)} updates"
    ctx = {
        "recipient": user.get_full_name() or user.username,
        "subject": subject,
        "waiting": waiting,
        "news": news,
        "inbox_url": base + reverse("inbox"),
        "as_of": zones.moment(now, zone),
        "hour": f"{hour:02d}:00 {now.astimezone(zone).tzname() or ''}".strip(),
    }
    msg = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string("approvals/mail/digest.txt", ctx),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[rows[0].to_address],
        headers={
            "Message-ID": f"<digest-{user.pk}-{rows[0].pk}-{rows[-1].pk}@approvals.{mail_domain()}>"
        },
    )
    msg.attach_alternative(render_to_string("approvals/mail/digest.html", ctx), "text/html")
    return msg


def mail_digest_send() -> dict[str, Any]:
    """Send every digest due now: one mail per person whose hour has come with rows
    waiting for them."""
    now = clock.now()
    sent = failed = 0
    for user, hour in _due_people(now):
        rows = _claim(user.pk, now)
        if not rows:
            continue
        try:
            digest_email(user, rows, hour).send()
        except Exception as exc:
            log.warning("digest for %s failed: %s", user.pk, exc)
            MailMessage.objects.filter(pk__in=[r.pk for r in rows]).update(
                lease_until=None, last_error=f"{type(exc).__name__}: {exc}"[:2000]
            )
            failed += 1
            continue
        MailMessage.objects.filter(pk__in=[r.pk for r in rows]).update(
            status=MailStatus.SENT, sent_at=clock.now(), lease_until=None
        )
        metrics.MAIL_SENT.inc()
        sent += 1
    return {"sent": sent, "failed": failed}
