"""Counters of the mail sender."""

from __future__ import annotations

from prometheus_client import Counter

MAIL_SENT = Counter("approvals_mail_sent_total", "Mails the outbox sent (digests included).")
MAIL_RETRIES = Counter("approvals_mail_retries_total", "Mail sends that failed and will retry.")
MAIL_FAILED = Counter(
    "approvals_mail_failed_total", "Mails given up after the last attempt (status failed)."
)
