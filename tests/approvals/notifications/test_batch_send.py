"""The sender's batch: rendered in a constant number of queries and alike to each mail
rendered alone, sent over one SMTP session, marked in one statement; a mail that cannot
be rendered or that the server refuses holds back none of the others, is retried (then
failed), and nothing is sent twice. And the bytes ``OutboxEmail`` writes read as the
mail Django's email package would have built."""

from __future__ import annotations

import datetime as dt
import email
import re
import socket
import threading
from collections.abc import Iterator
from email import policy
from typing import Any

import pytest
from django.core.mail import EmailMultiAlternatives
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import clock
from approvals.models import User
from approvals.notifications.bodies import batch_bodies, mail_bodies
from approvals.notifications.mime import OutboxEmail
from approvals.notifications.models import MailMessage
from approvals.notifications.sender import mail_send
from approvals.workers.timers import timer_drain

from ..helpers import start_expense
from .smtp_sink import Sink, SinkServer

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)
TOKEN = re.compile(r"/mail/links/([^\s\"<]+)")


def expenses(api: Any, count: int) -> list[str]:
    return [
        str(start_expense(api("alice"), 4_500_000 + i, subject=f"E-b{i}").json()["workflowId"])
        for i in range(count)
    ]


def pending() -> list[MailMessage]:
    return list(MailMessage.objects.filter(status="pending", digest=False).order_by("pk"))


@pytest.fixture
def smtp(settings: Any) -> Iterator[Any]:
    def serve(sink: Sink) -> SinkServer:
        server = SinkServer(sink)
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.EMAIL_TIMEOUT = 10
        return server

    yield serve


def test_a_batch_renders_each_mail_as_alone_in_two_queries_whatever_its_size(acme, api):
    # given bob in Kolkata (victor in no zone of his own: the organisation's, read once)
    # and three expenses reminded then escalated: task, reminder, escalated and
    # escalated-away mails
    User.objects.filter(username="bob").update(time_zone="Asia/Kolkata")
    expenses(api, 3)
    with clock.shifted(DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 3
    with clock.shifted(2 * DAY + dt.timedelta(seconds=1)):
        assert timer_drain() == 3
    rows = pending()
    assert {r.kind for r in rows} == {"task_assigned", "reminder", "escalated", "escalated_away"}

    # when the batch is rendered at once
    with CaptureQueriesContext(connection) as many:
        batch = batch_bodies(rows)
    with CaptureQueriesContext(connection) as few:
        batch_bodies([r for r in rows if r.kind == "reminder"][:1])

    # then each mail reads as rendered alone (links aside: each rendering signs its own),
    # waiting since included, and the queries do not grow with the batch
    for row, bodies in zip(rows, batch, strict=True):
        assert not isinstance(bodies, Exception)
        alone = mail_bodies(row)
        assert [TOKEN.sub("T", b) for b in bodies] == [TOKEN.sub("T", b) for b in alone]
    reminder = next(b for r, b in zip(rows, batch, strict=True) if r.kind == "reminder")
    assert not isinstance(reminder, Exception) and "Waiting since: " in reminder[0]
    assert len(many.captured_queries) == 2 and len(few.captured_queries) <= 2


def test_sending_a_batch_costs_the_same_statements_for_two_mails_or_twelve(acme, api, mailoutbox):
    expenses(api, 12)
    ids = [r.pk for r in pending()]
    with CaptureQueriesContext(connection) as two:
        assert mail_send(ids=ids[:2])["sent"] == 2
    with CaptureQueriesContext(connection) as ten:
        assert mail_send(ids=ids[2:])["sent"] == 10
    assert len(two.captured_queries) == len(ten.captured_queries) <= 8
    assert len(mailoutbox) == 12
    for row in MailMessage.objects.filter(pk__in=ids):
        sent = next(m for m in mailoutbox if m.extra_headers["Message-ID"] == row.message_id)
        assert row.status == "sent" and row.sent_at is not None and row.lease_until is None
        assert (sent.body, sent.alternatives[0][0]) == (row.text_body, row.html_body)


def test_a_mail_that_cannot_be_rendered_holds_back_none_of_its_batch(acme, api, smtp, settings):
    # given four task mails, the second of which keeps facts its links cannot be made from
    expenses(api, 4)
    rows = pending()
    broken, facts = rows[1], dict(rows[1].context)
    MailMessage.objects.filter(pk=broken.pk).update(context={**facts, "link": {"step": "x"}})
    sink = Sink()
    with smtp(sink):
        # when the batch is sent
        result = mail_send(ids=[r.pk for r in rows])

        # then the other three went, once each, in one session, and are marked sent
        assert result["sent"] == 3 and result["retried"] == 1
        others = {r.message_id for r in rows if r.pk != broken.pk}
        assert sink.counts() == {mid: 1 for mid in others}
        assert len(sink.sessions) == 1
        assert set(
            MailMessage.objects.filter(pk__in=[r.pk for r in rows])
            .exclude(pk=broken.pk)
            .values_list("status", flat=True)
        ) == {"sent"}
        # and the broken one waits for its retry, saying why
        broken.refresh_from_db()
        assert (broken.status, broken.attempts, broken.text_body) == ("pending", 1, "")
        assert broken.last_error.startswith("KeyError") and broken.next_attempt_at > clock.now()

        # when its facts are mended and its back-off has run out
        MailMessage.objects.filter(pk=broken.pk).update(context=facts)
        with clock.shifted(dt.timedelta(seconds=settings.APPROVALS_MAIL_RETRY_SECONDS + 1)):
            again = mail_send()

    # then it alone goes, and no mail arrived twice
    assert again["sent"] == 1
    assert sink.counts() == {r.message_id: 1 for r in rows}
    assert not MailMessage.objects.exclude(status="sent").exists()


def test_a_recipient_the_server_refuses_is_retried_then_failed_and_the_batch_goes_on(
    acme, api, smtp, settings
):
    # given four task mails, the third to an address the server refuses
    settings.APPROVALS_MAIL_MAX_ATTEMPTS = 2
    expenses(api, 4)
    rows = pending()
    refused = rows[2]
    MailMessage.objects.filter(pk=refused.pk).update(to_address="gone@acme.example")
    sink = Sink(refuse_rcpt=frozenset({"gone@acme.example"}))
    with smtp(sink):
        # when the batch is sent
        first = mail_send(ids=[r.pk for r in rows])
        # then the three others went in the same session, the refused one is retried
        assert (first["sent"], first["retried"], first["failed"]) == (3, 1, 0)
        assert len(sink.sessions) == 1
        refused.refresh_from_db()
        assert refused.status == "pending" and "SMTPRecipientsRefused" in refused.last_error

        # when its second and last try is refused too
        with clock.shifted(dt.timedelta(seconds=settings.APPROVALS_MAIL_RETRY_SECONDS + 1)):
            second = mail_send()

    # then it is failed, never delivered, and nothing else was sent again
    assert (second["sent"], second["failed"]) == (0, 1)
    refused.refresh_from_db()
    assert (refused.status, refused.attempts, refused.lease_until) == ("failed", 2, None)
    assert sink.counts() == {r.message_id: 1 for r in rows if r.pk != refused.pk}


class HangUp:
    """A server that takes each connection and closes it before any greeting: an SMTP
    server that cannot be reached. Counts the connections it took."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.taken = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.taken += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


def test_a_server_that_cannot_be_reached_costs_one_connection_per_batch(acme, api, settings):
    # given four task mails and a mail server that hangs up at once
    expenses(api, 4)
    rows = pending()
    server = HangUp()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 10
    try:
        # when the batch is sent
        result = mail_send(ids=[r.pk for r in rows])
    finally:
        server.close()

    # then it was tried once, and every mail waits for its retry, saying why
    assert server.taken == 1
    assert (result["sent"], result["retried"]) == (0, 4)
    for row in MailMessage.objects.filter(pk__in=[r.pk for r in rows]):
        assert (row.status, row.attempts, row.lease_until) == ("pending", 1, None)
        assert row.last_error.startswith("SMTPServerDisconnected")


LONG_LINE = "<p>" + "Receipt line, ₹1,00,000.00. " * 60 + "</p>"  # over 998 octets


@pytest.mark.parametrize(
    ("subject", "html", "from_email", "to"),
    [
        (
            "Please approve: Expense claim ₹45,000.00 from Alice",
            "<p>Hello</p>",
            "Approvals <approvals@localhost>",
            "bob@acme.example",
        ),
        ("Plain words", LONG_LINE, "Genehmigungen Über <approvals@acme.example>", "b@acme.example"),
        (
            "Überweisung " * 20 + "€ and ₹ in a subject far longer than one header line",
            "<p>ünïcode\r\nand a CR\ronly</p>",
            "approvals@acme.example",
            "vera@acme.example",
        ),
    ],
)
def test_the_written_mail_reads_as_the_one_djangos_email_package_builds(
    settings, subject, html, from_email, to
):
    settings.DEFAULT_FROM_EMAIL = from_email
    text = "Hello Bob,\n\nWhat: " + subject + "\n.\nA line with a dot alone, above.\n"
    mid = "<wf-0b0e2a6c-5b0f-4a43-9e3c-1f6f7c0ab3d1-12-345@approvals.acme.example>"
    ours = OutboxEmail(
        subject=subject, text=text, html=html, to=to, message_id=mid, connection=None
    )
    theirs = EmailMultiAlternatives(
        subject=subject, body=text, from_email=from_email, to=[to], headers={"Message-ID": mid}
    )
    theirs.attach_alternative(html, "text/html")

    def read(message: Any) -> Any:
        raw = message.message().as_bytes(linesep="\r\n")
        assert all(len(line) <= 998 for line in raw.split(b"\r\n"))
        return email.message_from_bytes(raw, policy=policy.default)

    a, b = read(ours), read(theirs)
    for header in ("Subject", "From", "To", "Message-ID", "MIME-Version"):
        assert str(a[header]).strip() == str(b[header]).strip(), header
    assert a.get_content_type() == b.get_content_type() == "multipart/alternative"
    parts_a, parts_b = list(a.iter_parts()), list(b.iter_parts())
    assert [p.get_content_type() for p in parts_a] == ["text/plain", "text/html"]
    assert [p.get_content_type() for p in parts_b] == ["text/plain", "text/html"]
    for pa, pb in zip(parts_a, parts_b, strict=True):
        assert pa.get_content().replace("\r\n", "\n") == pb.get_content().replace("\r\n", "\n")
    sent_at = email.utils.parsedate_to_datetime(str(a["Date"])).replace(tzinfo=dt.UTC)
    assert abs(sent_at - clock.now()) < dt.timedelta(minutes=5)
