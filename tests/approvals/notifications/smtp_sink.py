"""A local SMTP server for the delivery tests (aiosmtpd, in a thread of the test
process). It counts every message by Message-ID and the sessions they came in, can
refuse each message's first tries with 451 and chosen recipients with 550, and can
hold a message in DATA so a test can kill the sender meanwhile. A message counts as
delivered only when the 250 is about to be written: a sender killed while held drops
the connection, aiosmtpd cancels the handler, and nothing is counted, as a real mail
server would not deliver it."""

from __future__ import annotations

import asyncio
import email
import socket
import threading
from collections import Counter
from typing import Any

from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sink:
    def __init__(
        self,
        *,
        refuse_first: int = 0,
        hold_at: int | None = None,
        refuse_rcpt: frozenset[str] = frozenset(),
    ) -> None:
        self.refuse_first = refuse_first
        self.refuse_rcpt = refuse_rcpt  # addresses refused at RCPT TO with a 550
        self.sessions: set[Any] = set()  # the client end of each session that sent a mail
        self.hold_at = hold_at  # hold the message that would be the nth delivered (0-based)
        self.tries: Counter[str] = Counter()
        self.delivered: list[str] = []
        self.holding = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: Any
    ) -> str:
        if address in self.refuse_rcpt:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        # A long Message-ID arrives folded over two lines (RFC 5322): unfold it.
        raw = email.message_from_bytes(envelope.content)["Message-ID"]
        message_id = "".join(str(raw).split())
        with self._lock:
            self.sessions.add(session.peer)
            self.tries[message_id] += 1
            tries = self.tries[message_id]
            hold = self.hold_at is not None and len(self.delivered) == self.hold_at
        if tries <= self.refuse_first:
            return "451 4.3.0 Try again later"
        if hold and not self.holding.is_set():
            self.holding.set()
            while not self.release.is_set():  # cancelled here if the sender dies
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # let a dropped connection be noticed first
        with self._lock:
            self.delivered.append(message_id)
        return "250 2.0.0 OK"

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(self.delivered)


class SinkServer:
    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.port = free_port()
        self.controller = Controller(sink, hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> SinkServer:
        self.controller.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.sink.release.set()
        self.controller.stop()
