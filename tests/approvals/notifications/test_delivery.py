"""Delivery through a real Celery worker to a local SMTP server: every message arrives
exactly once (counted by Message-ID at the server) when the server refuses the first
tries; when the worker is killed with SIGKILL in the middle of a batch and started again,
nothing is lost and only what the server accepted before the kill comes again, with its
Message-ID. Slow: ``pytest -m "not slow"`` skips these locally; ``make test`` runs them."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from approvals.models import User
from approvals.notifications.models import MailMessage
from approvals.notifications.sender import _courier, mail_sweep
from approvals.notifications.tasks import send_mail
from approvals.services.workflows import workflow_start

from ..durability.conftest import Processes, database_url, use_broker, wait_until
from .smtp_sink import Sink, SinkServer

HERE = Path(__file__).resolve().parent
BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not BROKER_URL.startswith("redis://"), reason="needs the Redis broker"),
]


@pytest.fixture
def broker(settings: Any) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(BROKER_URL)
    client.flushdb()
    settings.APPROVALS_EMBEDDED_WORKER = False
    use_broker(BROKER_URL)
    try:
        yield client
    finally:
        use_broker(None)
        client.flushdb()
        client.close()


@pytest.fixture
def procs(tmp_path: Path, broker: redis.Redis) -> Iterator[Processes]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONUNBUFFERED": "1",
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_TIMEOUT": "10",
        "APPROVALS_MAIL_RETRY_SECONDS": "1",
        "APPROVALS_MAIL_LEASE_SECONDS": "3",
    }
    procs = Processes(tmp_path, env)
    try:
        yield procs
    finally:
        if any(p.popen.poll() is not None for p in procs.started):
            print(procs.logs())
        procs.stop_all()


def worker(procs: Processes, port: int) -> Any:
    procs.env["EMAIL_PORT"] = str(port)
    return procs.spawn("worker", [sys.executable, str(HERE / "worker.py"), "default"])


def start_expenses(count: int) -> None:
    alice = User.objects.get(username="alice")
    for i in range(count):
        workflow_start(
            submitter=alice,
            template_key="expense-approval",
            subject_type="expense",
            subject_id=f"D-{i}",
            data={"amountPaise": 4_500_000 + i, "currency": "INR", "department": "eng"},
        )


def all_sent(sink: Sink, expected: set[str]) -> bool:
    # the sweeper, as beat runs it, picks up what a lost message or a dead worker left
    mail_sweep(redispatch_after=0)
    return set(sink.counts()) == expected and not MailMessage.objects.exclude(status="sent")


@pytest.mark.topology
def test_refused_first_tries_then_every_message_exactly_once(acme: Any, procs: Processes) -> None:
    sink = Sink(refuse_first=2)
    with SinkServer(sink) as server:
        worker(procs, server.port)
        start_expenses(5)
        expected = set(MailMessage.objects.values_list("message_id", flat=True))
        assert len(expected) == 5

        wait_until(lambda: all_sent(sink, expected), timeout=90, interval=1, what="all mail")
        time.sleep(2)  # anything that would arrive twice has had its chance

    assert sink.counts() == {mid: 1 for mid in expected}
    assert all(sink.tries[mid] == 3 for mid in expected)
    rows = MailMessage.objects.all()
    assert {(r.status, r.attempts) for r in rows} == {("sent", 3)}


@pytest.mark.topology
def test_a_worker_killed_mid_batch_then_restarted_loses_nothing_and_repeats_only_what_was_accepted(
    acme: Any, procs: Processes, broker: redis.Redis
) -> None:
    start_expenses(6)
    ids = list(MailMessage.objects.order_by("pk").values_list("pk", flat=True))
    expected = set(MailMessage.objects.values_list("message_id", flat=True))
    broker.flushdb()  # drop the per-command messages: one batch carries every row
    send_mail.apply_async(args=(ids,))

    sink = Sink(hold_at=2)
    with SinkServer(sink) as server:
        first = worker(procs, server.port)
        assert sink.holding.wait(60), procs.logs()
        # the third message is in DATA: the worker dies before the server says 250
        first.kill()
        sink.release.set()
        accepted_first = set(sink.counts())
        assert len(accepted_first) == 2
        # the batch was leased in one statement and is marked sent in one after the
        # last send: the killed sender marked none of it
        assert MailMessage.objects.filter(status="pending", lease_until__isnull=False).count() == 6
        assert not MailMessage.objects.filter(status="sent").exists()

        worker(procs, server.port)
        wait_until(lambda: all_sent(sink, expected), timeout=90, interval=1, what="all mail")
        time.sleep(2)

    # nothing lost; only the two the server accepted before the kill came twice, with
    # the same Message-ID (which mail clients show once)
    counts = sink.counts()
    assert set(counts) == expected
    assert {mid for mid, n in counts.items() if n == 2} == accepted_first
    assert all(n in (1, 2) for n in counts.values())
    assert MailMessage.objects.filter(status="sent").count() == 6
    assert sorted(MailMessage.objects.values_list("attempts", flat=True)) == [2] * 6


def _queued_mail_events(client: redis.Redis) -> list[list[tuple[str, int]]]:
    """The ``(workflow, seq)`` pairs of each send_mail message waiting in the broker."""
    messages = []
    for raw in client.lrange("default", 0, -1):
        envelope = json.loads(raw)
        assert envelope["headers"]["task"] == "approvals.send_mail"
        _, kwargs, _ = json.loads(base64.b64decode(envelope["body"]))
        messages.append([(wf, seq) for wf, seqs in kwargs["events"] for seq in seqs])
    return messages


def test_commands_hand_their_mail_to_the_broker_together(
    acme: Any, broker: redis.Redis, settings: Any
) -> None:
    settings.APPROVALS_MAIL_HANDOVER_LINGER_MS = 300  # all ten land in one linger or two
    start_expenses(10)
    _courier.flush()

    messages = _queued_mail_events(broker)
    handed = [pair for message in messages for pair in message]
    rows = MailMessage.objects.values_list("workflow_id", "event_seq")
    assert sorted(handed) == sorted((str(wf), seq) for wf, seq in rows)
    assert len(handed) == 10 and len(messages) < 10


def test_a_process_that_exits_hands_over_what_it_holds(acme: Any, broker: redis.Redis) -> None:
    # A long linger: only the exit hook can have sent the message before the exit.
    script = (
        "import django; django.setup()\n"
        "from tests.approvals.notifications.test_delivery import start_expenses\n"
        "start_expenses(1)\n"
    )
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "APPROVALS_EMBEDDED_WORKER": "false",
        "APPROVALS_MAIL_HANDOVER_LINGER_MS": "60000",
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        cwd=HERE.parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]

    [row] = MailMessage.objects.all()
    assert _queued_mail_events(broker) == [[(str(row.workflow_id), row.event_seq)]]
