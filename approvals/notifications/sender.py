"""Draining the mail outbox.

A sender claims a batch of due rows in one short transaction (``SELECT ... FOR UPDATE
SKIP LOCKED``, then a lease of APPROVALS_MAIL_LEASE_SECONDS and one more attempt each),
sends them over one connection of Django's mail backend, each with its stable
Message-ID, and marks the accepted ones sent in one statement right after. Rows are never
sent twice except in one window: a sender killed after the mail server accepted some of
the batch and before that statement commits. The lease then runs out and those rows are
sent again, with the same Message-IDs, so mail clients that de-duplicate show each once. A failure
sets the next attempt after an exponential back-off; after APPROVALS_MAIL_MAX_ATTEMPTS
the row is failed (``approvals_mail_failed_total``). The sweeper re-dispatches due rows
whose message was lost (broker down, worker killed), so nothing waits forever.
"""

from __future__ import annotations

import atexit
import datetime as dt
import logging
import os
import queue
import smtplib
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db import connections, transaction
from django.db.models import F, Q

from approvals import clock

from . import metrics
from .bodies import batch_bodies, mail_bodies
from .format import one_line
from .mime import OutboxEmail
from .models import MailMessage, MailStatus

log = logging.getLogger(__name__)
MAX_BACKOFF_SECONDS = 3600

_embedded_pool: ThreadPoolExecutor | None = None


def mail_dispatch(*, ids: list[int]) -> None:
    """Hand rows to a sender. Call after commit; a broker that is down fails nothing
    (the sweeper sends the rows later)."""
    if ids:
        _hand_over(ids=ids)


def mail_dispatch_for(*, workflow_id: Any, seqs: list[int]) -> None:
    """Hand the immediate rows of these events to a sender, which looks them up: the
    command that wrote them, just committed, spends no query on it."""
    item = (str(workflow_id), list(seqs))
    if settings.APPROVALS_EMBEDDED_WORKER:
        _hand_over(events=[item])
    else:
        _courier.put(item)


def mail_ids_for(*, events: Iterable[tuple[Any, list[int]]]) -> list[int]:
    """The pending immediate rows of each ``(workflow_id, seqs)`` in ``events``."""
    pairs = list(events)
    if not pairs:
        return []
    of_events = Q()
    for wf, wf_seqs in pairs:
        of_events |= Q(workflow_id=wf, event_seq__in=list(wf_seqs))
    return list(
        MailMessage.objects.filter(of_events, status=MailStatus.PENDING, digest=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _hand_over(**rows: Any) -> None:
    if settings.APPROVALS_EMBEDDED_WORKER:
        global _embedded_pool
        if _embedded_pool is None:
            _embedded_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mail")
        _embedded_pool.submit(_send_embedded, **rows)
        return
    from .tasks import send_mail

    try:
        send_mail.apply_async(kwargs=rows)
    except Exception:
        log.exception("could not hand mail rows %s to the broker; the sweeper will", rows)


class _Courier:
    """Carries committed commands' mail events to the broker from one thread per
    process, several in one message: a command pays for a queue put, not for a broker
    publish. The thread takes the first waiting item, lingers
    APPROVALS_MAIL_HANDOVER_LINGER_MS for others and sends them together. What a killed
    process still held is found by the sweeper, as with a broker that is down; a process
    that exits normally sends what it holds first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._queue: queue.SimpleQueue[tuple[str, list[int]] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()  # cuts a linger short

    def put(self, item: tuple[str, list[int]]) -> None:
        if self._pid != os.getpid():  # first use, or a forked child: its own thread
            self._start()
        self._queue.put(item)

    def _start(self) -> None:
        with self._lock:
            if self._pid == os.getpid():
                return
            self._queue = queue.SimpleQueue()
            self._stopping = threading.Event()
            self._thread = threading.Thread(target=self._run, name="mail-courier", daemon=True)
            self._thread.start()
            self._pid = os.getpid()

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            linger = settings.APPROVALS_MAIL_HANDOVER_LINGER_MS / 1000
            if linger > 0:
                self._stopping.wait(linger)
            if not self._send([first, *self._waiting()]):
                return

    def _waiting(self) -> list[tuple[str, list[int]] | None]:
        items: list[tuple[str, list[int]] | None] = []
        while True:
            try:
                items.append(self._queue.get_nowait())
            except queue.Empty:
                return items

    def _send(self, items: list[tuple[str, list[int]] | None]) -> bool:
        """Send the events among ``items``; False once the stop mark was among them.
        Nothing may end the thread early: the sweeper sends what a failure left."""
        events = [item for item in items if item is not None]
        if events:
            try:
                _hand_over(events=events)
            except Exception:
                log.exception("could not hand mail events to a sender; the sweeper will")
        return len(events) == len(items)

    def flush(self) -> None:
        """Send what waits and stop the thread (at exit; ``put`` starts a new one)."""
        thread = self._thread
        if thread is None or self._pid != os.getpid() or not thread.is_alive():
            return
        self._queue.put(None)
        self._stopping.set()
        thread.join(timeout=5)
        self._thread, self._pid = None, 0


_courier = _Courier()
atexit.register(_courier.flush)


def _send_embedded(**rows: Any) -> None:
    from django.db import close_old_connections

    try:
        mail_send(ids=rows["ids"] if "ids" in rows else mail_ids_for(**rows))
    except Exception:
        log.exception("sending mail failed; the sweeper will retry")
    finally:
        close_old_connections()


def _due(now: dt.datetime) -> Q:
    return Q(status=MailStatus.PENDING, digest=False, next_attempt_at__lte=now) & (
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    )


def _claim(ids: list[int] | None, limit: int) -> list[MailMessage]:
    """Lease up to ``limit`` due rows in one short transaction: one more attempt each,
    and a lease of APPROVALS_MAIL_LEASE_SECONDS.

    Given ids are read through the primary key (ordered by it): with a large backlog
    pending, ordering them by due time was planned through the due-rows index and read
    the whole backlog."""
    now = clock.now()
    lease = now + dt.timedelta(seconds=settings.APPROVALS_MAIL_LEASE_SECONDS)
    qs = MailMessage.objects.filter(_due(now))
    if ids is not None:
        qs = qs.filter(pk__in=ids).order_by("pk")
    else:
        qs = qs.order_by("next_attempt_at", "pk")
    with transaction.atomic():
        rows = list(qs.select_for_update(skip_locked=True)[:limit])
        if rows:
            MailMessage.objects.filter(pk__in=[row.pk for row in rows]).update(
                attempts=F("attempts") + 1, lease_until=lease
            )
    for row in rows:
        row.attempts += 1
        row.lease_until = lease
    return rows


def backoff(attempt: int) -> float:
    """Seconds before the next try after the ``attempt``-th failure."""
    return float(
        min(MAX_BACKOFF_SECONDS, settings.APPROVALS_MAIL_RETRY_SECONDS * 2 ** (attempt - 1))
    )


def email_of(
    row: MailMessage, connection: Any = None, bodies: tuple[str, str] | None = None
) -> EmailMultiAlternatives:
    """The mail of an outbox row, its bodies (``bodies``, else rendered now) kept on the
    row: they are stored with it once the server accepts it."""
    row.text_body, row.html_body = bodies or mail_bodies(row)
    return OutboxEmail(
        subject=one_line(row.subject),  # a row written before subjects were folded
        text=row.text_body,
        html=row.html_body,
        to=row.to_address,
        message_id=row.message_id,
        connection=connection,
    )


def mail_send(*, ids: list[int] | None = None, limit: int | None = None) -> dict[str, Any]:
    """Send due rows (only ``ids`` when given) over one SMTP connection: lease them in
    one statement, render the batch's bodies in at most two more queries, send each,
    then mark every accepted one sent in one statement. Returns what happened and,
    under ``retry_in``, the earliest back-off a failure chose.

    A row that fails (its bodies cannot be rendered, the server refuses it) is retried
    after its back-off, or failed after APPROVALS_MAIL_MAX_ATTEMPTS; the rest of the
    batch goes on. A server that cannot be reached fails the rest of the batch with one
    attempt to connect, not one per mail.

    A sender killed after the server accepted some of a batch and before the marking
    commits leaves those rows leased; when the lease runs out they are sent again with
    the same Message-ID (mail clients show one). The batch is the window, so it is
    bounded by APPROVALS_MAIL_BATCH."""
    limit = min(limit or settings.APPROVALS_MAIL_BATCH, settings.APPROVALS_MAIL_BATCH)
    if ids is not None:
        ids = ids[:limit]
    failed = retried = 0
    retry_in: float | None = None
    rows = _claim(ids, limit)
    accepted: list[MailMessage] = []
    connection: Any = None
    unreachable: Exception | None = None  # the server could not be reached: stop trying
    try:
        for row, bodies in zip(rows, batch_bodies(rows), strict=True):
            try:
                if isinstance(bodies, Exception):
                    raise bodies
                if connection is None:
                    if unreachable is not None:
                        raise unreachable
                    connection = get_connection(fail_silently=False)
                    try:
                        connection.open()  # one session for the batch, not one per send
                    except Exception as exc:
                        unreachable = exc
                        raise
                email_of(row, connection, bodies).send()
            except Exception as exc:
                if not isinstance(bodies, Exception) and not _session_usable(exc):
                    connection = _close(connection)
                if _record_failure(row, exc):
                    failed += 1
                else:
                    retried += 1
                    delay = backoff(row.attempts)
                    retry_in = delay if retry_in is None else min(retry_in, delay)
                continue
            accepted.append(row)
    finally:
        # Right after the server accepted them: the only duplicate window is before this.
        # The rows keep the bodies they sent.
        _mark_sent(accepted)
        _close(connection)
    return {"sent": len(accepted), "retried": retried, "failed": failed, "retry_in": retry_in}


def _session_usable(exc: Exception) -> bool:
    """Whether the SMTP session goes on after ``exc``: a server that refused one
    sender, recipient or message answered, and smtplib reset the transaction (RSET);
    anything else (a dropped connection, a timeout) may have left it unusable."""
    return isinstance(
        exc, smtplib.SMTPRecipientsRefused | smtplib.SMTPSenderRefused | smtplib.SMTPDataError
    )


# One statement for a batch, whatever its size, on PostgreSQL: the ids and the bodies
# travel as three arrays.
_MARK_SENT_SQL = (
    'UPDATE "{table}" AS m SET "status" = %s, "sent_at" = %s, "lease_until" = NULL, '
    '"last_error" = \'\', "text_body" = v.t, "html_body" = v.h '
    "FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS v(id, t, h) "
    'WHERE m."{pk}" = v.id'
)


def _mark_sent(rows: list[MailMessage]) -> None:
    if not rows:
        return
    now = clock.now()
    for row in rows:
        row.status = MailStatus.SENT
        row.sent_at = now
        row.lease_until = None
        row.last_error = ""
    db = connections[MailMessage.objects.db]
    meta = MailMessage._meta
    sql = _MARK_SENT_SQL.format(table=meta.db_table, pk=meta.pk.column)
    with db.cursor() as cursor:
        cursor.execute(
            sql,
            [
                MailStatus.SENT.value,
                now,
                [row.pk for row in rows],
                [row.text_body for row in rows],
                [row.html_body for row in rows],
            ],
        )
    metrics.MAIL_SENT.inc(len(rows))


def _close(connection: Any) -> Any:
    if connection is not None:
        try:
            connection.close()
        except Exception:
            log.debug("closing the mail connection failed", exc_info=True)
    return None


def _record_failure(row: MailMessage, exc: Exception) -> bool:
    """Schedule the next try, or give up; True when the row is now failed."""
    error = f"{type(exc).__name__}: {exc}"[:2000]
    log.warning("mail %s to %s failed (try %d): %s", row.pk, row.to_address, row.attempts, error)
    if row.attempts >= settings.APPROVALS_MAIL_MAX_ATTEMPTS:
        MailMessage.objects.filter(pk=row.pk).update(
            status=MailStatus.FAILED, lease_until=None, last_error=error
        )
        metrics.MAIL_FAILED.inc()
        return True
    MailMessage.objects.filter(pk=row.pk).update(
        next_attempt_at=clock.now() + dt.timedelta(seconds=backoff(row.attempts)),
        lease_until=None,
        last_error=error,
    )
    metrics.MAIL_RETRIES.inc()
    return False


def mail_sweep(*, redispatch_after: float = 30.0, limit: int = 1000) -> int:
    """Re-dispatch rows due for ``redispatch_after`` seconds and not held by a live
    lease: their message was lost, their sender died, or their back-off ran out."""
    now = clock.now()
    stale = now - dt.timedelta(seconds=redispatch_after)
    ids = list(
        MailMessage.objects.filter(_due(now), next_attempt_at__lte=stale)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    batch = settings.APPROVALS_MAIL_BATCH
    for i in range(0, len(ids), batch):
        mail_dispatch(ids=ids[i : i + batch])
    return len(ids)
