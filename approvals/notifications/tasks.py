"""Celery tasks of the mail outbox. Each calls a service; no logic lives here."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import close_old_connections

from .digest import mail_digest_send
from .sender import mail_dispatch, mail_ids_for, mail_send, mail_sweep


@shared_task(name="approvals.send_mail", acks_late=True, reject_on_worker_lost=True)
def send_mail(
    ids: list[int] | None = None,
    workflow_id: str | None = None,
    seqs: list[int] | None = None,
    events: list[tuple[str, list[int]]] | None = None,
) -> dict[str, Any]:
    """Send the rows ``ids``, or the immediate rows of each ``(workflow_id, seqs)`` in
    ``events``. ``workflow_id`` and ``seqs`` name one workflow's events: the form of
    messages queued before several commands shared one."""
    close_old_connections()  # the worker reuses connections; drop one that broke
    if ids is None:
        if workflow_id is not None:
            events = [*(events or []), (workflow_id, seqs or [])]
        ids = mail_ids_for(events=events or [])
    batch = settings.APPROVALS_MAIL_BATCH
    if len(ids) > batch:  # more than one sender's share: other workers take the rest
        mail_dispatch(ids=ids[batch:])
        ids = ids[:batch]
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
