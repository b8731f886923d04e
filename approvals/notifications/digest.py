"""The daily digest: for each person who chose it, one mail listing the rows that
waited for it, and those rows marked sent. Claimed with a lease as the sender does,
so two digest runs at once never send one person two digests."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import Q
from django.template.loader import render_to_string
from django.urls import reverse

from approvals import clock
from approvals.models import User

from . import metrics
from .messages import mail_domain
from .models import TASK_KINDS, MailMessage, MailStatus

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


def digest_email(user: User, rows: list[MailMessage]) -> EmailMultiAlternatives:
    base = settings.APPROVALS_BASE_URL
    items = [
        {
            "subject": r.subject,
            "detail": _detail(r.context or {}),
            "url": base + reverse("workflow", args=[r.workflow_id]),
            "task": r.kind in TASK_KINDS,
        }
        for r in rows
    ]
    waiting = [i for i in items if i["task"]]
    news = [i for i in items if not i["task"]]
    subject = f"Your approvals digest: {len(waiting)} waiting for you, {len(news)} updates"
    ctx = {
        "recipient": user.get_full_name() or user.username,
        "subject": subject,
        "waiting": waiting,
        "news": news,
        "inbox_url": base + reverse("inbox"),
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
    """Send every digest due now: one mail per person with rows waiting for it."""
    now = clock.now()
    user_ids = (
        MailMessage.objects.filter(status=MailStatus.PENDING, digest=True)
        .values_list("recipient_id", flat=True)
        .distinct()
    )
    sent = failed = 0
    for user in User.objects.filter(pk__in=list(user_ids)):
        rows = _claim(user.pk, now)
        if not rows:
            continue
        try:
            digest_email(user, rows).send()
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
