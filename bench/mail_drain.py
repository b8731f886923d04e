"""The mail outbox's drain rate: N pending messages sent by the real sender.

    .venv/bin/python bench/mail_drain.py [--messages 5000] [--batch 50] [--senders 1 4]

Fills the outbox with N copies of real mails, task mails and reminders alternately (the
projection's subject and the facts the sender renders its text and HTML from, of a
started expense and of its reminder a day later, whose "waiting since" the sender looks
up), then drains it
the way the workers do: the pending ids cut into batches of ``--batch``
(APPROVALS_MAIL_BATCH), each batch one ``mail_send(ids=...)`` call (what one
``approvals.send_mail`` task runs), ``--senders`` of them at once. Each run goes through
Django's SMTP backend to a local aiosmtpd sink in its own process (which counts what it
accepted by Message-ID), and once through the locmem backend, the outbox's own cost
without a network. Prints messages/s, p50/p95 per batch, the app's CPU per mail
(``time.process_time`` of this process: the sink's is not in it), SQL statements per
batch, the senders' peak memory, and checks every message arrived once.
"""

from __future__ import annotations

import argparse
import itertools
import queue
import resource
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    VENV_BIN,
    Report,
    free_port,
    seed,
    setup_django,
    summarize_ms,
)

MESSAGE_ID_PREFIX = "<bench-mail-"
FIRST_SEQ = 1_000_000  # far above any real event of the bench's workflow


# --- the SMTP sink, run as its own process ----------------------------------------------


def sink_main(port: int) -> None:
    """Accept every message, count distinct Message-IDs; print the counts when stdin
    closes."""
    import email

    from aiosmtpd.controller import Controller

    seen: dict[str, int] = {}
    lock = threading.Lock()

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            raw = email.message_from_bytes(envelope.content)["Message-ID"]
            key = "".join(str(raw).split())
            with lock:
                seen[key] = seen.get(key, 0) + 1
            return "250 2.0.0 OK"

    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    print("ready", flush=True)
    sys.stdin.read()
    controller.stop()
    with lock:
        print(f"{len(seen)} {sum(seen.values())}", flush=True)


class Sink:
    def __enter__(self) -> Sink:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [str(VENV_BIN / "python"), __file__, "--sink", str(self.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"
        return self

    def counts(self) -> tuple[int, int]:
        """(distinct Message-IDs, messages accepted); stops the sink."""
        out, _ = self.proc.communicate("", timeout=60)
        distinct, total = out.split()
        return int(distinct), int(total)

    def __exit__(self, *exc: Any) -> None:
        if self.proc.poll() is None:
            self.proc.kill()


# --- filling and draining ------------------------------------------------------------------


def template_mails(users: dict[str, Any]) -> list[Any]:
    """Real mails: the projection's rows for a started expense's task and, a day later,
    its reminder."""
    import datetime as dt

    from approvals import clock
    from approvals.notifications.models import MailMessage
    from approvals.services.workflows import workflow_start
    from approvals.workers.timers import timer_drain

    started = workflow_start(
        submitter=users["alice"],
        template_key="expense-approval",
        subject_type="bench-mail",
        subject_id=f"MAIL-{time.time_ns()}",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    )
    with clock.shifted(dt.timedelta(days=1, seconds=1)):
        timer_drain()
    rows = MailMessage.objects.filter(workflow_id=started.workflow_id).order_by("pk")
    task = rows.filter(kind="task_assigned").first()
    reminder = rows.filter(kind="reminder").first()
    return [row for row in (task, reminder) if row is not None]


def fill(models: list[Any], n: int, run: str) -> list[int]:
    from approvals import clock
    from approvals.notifications.models import MailMessage, MailStatus

    MailMessage.objects.filter(message_id__startswith=MESSAGE_ID_PREFIX).delete()
    now = clock.now()
    rows = [
        MailMessage(
            tenant_id=model.tenant_id,
            workflow_id=model.workflow_id,
            event_seq=FIRST_SEQ + i,
            recipient_id=model.recipient_id,
            kind=model.kind,
            digest=False,
            to_address=model.to_address,
            subject=model.subject,
            context=model.context,
            message_id=f"{MESSAGE_ID_PREFIX}{run}-{i}@approvals.bench>",
            status=MailStatus.PENDING,
            next_attempt_at=now,
            created_at=now,
        )
        for i, model in zip(range(n), itertools.cycle(models), strict=False)
    ]
    MailMessage.objects.bulk_create(rows, batch_size=2000)
    return list(
        MailMessage.objects.filter(message_id__startswith=f"{MESSAGE_ID_PREFIX}{run}-")
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def drain(ids: list[int], *, batch: int, senders: int, locmem: bool) -> dict[str, Any]:
    """Send every id in batches, ``senders`` threads at once; time each batch, count
    each batch's SQL statements and the process's CPU."""
    from django.core import mail
    from django.db import connection

    from approvals.notifications.sender import mail_send

    batches: queue.Queue[list[int]] = queue.Queue()
    for i in range(0, len(ids), batch):
        batches.put(ids[i : i + batch])
    took: list[float] = []
    statements: list[int] = []
    sent = [0]
    lock = threading.Lock()
    peak = [rss_mib()]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_mib())

    def sender() -> None:
        count = [0]

        def counted(execute: Any, *args: Any) -> Any:
            count[0] += 1
            return execute(*args)

        try:
            while True:
                try:
                    ids_ = batches.get_nowait()
                except queue.Empty:
                    return
                count[0] = 0
                t = time.perf_counter()
                with connection.execute_wrapper(counted):
                    result = mail_send(ids=ids_, limit=len(ids_))
                elapsed = time.perf_counter() - t
                if locmem:
                    mail.outbox.clear()  # what was "sent" is not kept across batches
                with lock:
                    took.append(elapsed)
                    statements.append(count[0])
                    sent[0] += result["sent"]
        finally:
            connection.close()

    rss_before = rss_mib()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    threads = [threading.Thread(target=sender) for _ in range(senders)]
    t0, cpu0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    done.set()
    sampler.join()
    return {
        "wall": wall,
        "cpu_ms_per_mail": cpu * 1000 / sent[0] if sent[0] else float("nan"),
        "statements": sum(statements) / len(statements) if statements else float("nan"),
        "sent": sent[0],
        "batches": summarize_ms(took),
        "rss_before": rss_before,
        "rss_peak": max(peak[0], rss_mib()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=5000)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--senders", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--sink", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.sink:
        sink_main(args.sink)
        return

    setup_django()
    from django.conf import settings

    from approvals.notifications.bodies import mail_bodies
    from approvals.notifications.models import MailMessage, MailStatus

    users = seed()
    models = template_mails(users)
    assert len(models) == 2, "an expense and its reminder wrote no task and reminder rows"
    command = shlex.join([".venv/bin/python", "bench/mail_drain.py", *sys.argv[1:]])
    report = Report("mail_drain", f"Mail outbox drain: {args.messages:,} messages")
    rows: list[list[Any]] = []
    checks: list[str] = []
    scenarios = [("SMTP (aiosmtpd sink, own process)", n, False) for n in args.senders]
    scenarios.append(("locmem (no network)", 1, True))
    for label, senders, locmem in scenarios:
        run = f"{int(time.time())}-{senders}-{'l' if locmem else 's'}"
        ids = fill(models, args.messages, run)
        with Sink() as sink:
            if locmem:
                settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
            else:
                settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
                settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", sink.port
                settings.EMAIL_USE_TLS = False
            result = drain(ids, batch=args.batch, senders=senders, locmem=locmem)
            distinct, accepted = sink.counts()
        left = MailMessage.objects.filter(pk__in=ids).exclude(status=MailStatus.SENT).count()
        if not locmem:
            checks.append(
                f"{label}, {senders} sender(s): the sink accepted {accepted:,} messages with "
                f"{distinct:,} distinct Message-IDs for {len(ids):,} rows; {left} rows not sent"
            )
        b = result["batches"]
        rows.append(
            [
                label,
                senders,
                args.batch,
                result["sent"],
                result["wall"],
                result["sent"] / result["wall"] if result["wall"] else float("nan"),
                b["p50"],
                b["p95"],
                b["p50"] / args.batch,
                result["cpu_ms_per_mail"],
                result["statements"],
                result["rss_before"],
                result["rss_peak"],
            ]
        )
        MailMessage.objects.filter(pk__in=ids).delete()
    report.table(
        f"Draining {args.messages:,} pending mails, task mails and reminders alternately "
        f"(plain text + HTML, {sum(map(len, mail_bodies(models[0]))):,} bytes of body "
        "for a task mail, rendered by the sender)",
        [
            "backend",
            "senders",
            "batch",
            "sent",
            "seconds",
            "messages/s",
            "p50 ms per batch",
            "p95 ms per batch",
            "p50 ms per message (batch / size)",
            "app CPU ms per mail",
            "SQL statements per batch",
            "RSS before MiB",
            "RSS peak MiB",
        ],
        rows,
    )
    for line in checks:
        report.note(line)
    lifetime = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report.note(
        "app CPU is time.process_time() of the bench process over the drain divided by the "
        "mails sent: the senders' rendering, signing, MIME writing, smtplib and the "
        "database driver; the SMTP sink and PostgreSQL run in other processes and are not "
        "in it. It is the figure load moves least; messages/s is wall clock on a shared "
        "machine (one sender waits on four SMTP round trips per mail)"
    )
    report.note(
        "senders are threads of one process, each with its own database connection and "
        "one SMTP session per batch; peak RSS is that process's, sampled every 50 ms "
        f"(largest over the whole run: {lifetime:.0f} MiB)"
    )
    report.note(
        "a batch costs one claim transaction (BEGIN, SELECT ... FOR UPDATE SKIP LOCKED of "
        "up to --batch rows, one lease UPDATE, COMMIT), one read of the organisations' zones "
        "and one of the reminders' 'waiting since' (whatever the batch's size), the sends "
        "over one SMTP session, and one mark-sent UPDATE for all the accepted rows (their "
        "ids and bodies as arrays): two commits per batch, not per message. The price is a "
        "wider duplicate window: a sender killed mid-batch sends the batch's accepted part "
        "again, with the same Message-IDs"
    )
    report.markdown.append(
        f"Command: `{command}` (DATABASE_URL and CELERY_BROKER_URL set; the bench database "
        "is `approvals_bench` unless BENCH_DATABASE_URL names another)"
    )
    report.write()


if __name__ == "__main__":
    main()
