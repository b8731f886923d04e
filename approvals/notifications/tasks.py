"""Celery tasks of the mail outbox. Each calls a service; no logic lives here."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import close_old_connections

from .digest import mail_digest_send
from .sender import mail_send, mail_sweep


@shared_task(name="approvals.send_mail", acks_late=True, reject_on_worker_lost=True)
def send_mail(ids: list[int]) -> dict[str, Any]:
    close_old_connections()  # the worker reuses connections; drop one that broke
    done = mail_send(ids=ids)
    if done["retry_in"] is not None:
        # Quicker than waiting for the sweeper; the sweeper still covers a lost message.
        send_mail.apply_async(args=(ids,), countdown=done["retry_in"])
    return done


@shared_task(name="approvals.sweep_mail", ignore_result=True)
def sweep_mail() -> int:
    return mail_sweep()


@shared_task(name="approvals.send_digests", ignore_result=True)
def send_digests() -> dict[str, Any]:
    return mail_digest_send()
