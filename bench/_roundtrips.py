"""Count round trips to PostgreSQL as the wire sees them.

A TCP relay between the app and PostgreSQL: a round trip is one turn of the
conversation, the client sending (one or more packets, e.g. a whole pipeline) and then
the server answering. Counting turns on the socket, not statements in Python, is what
tells pipelining apart from one statement at a time.

    with RoundTripCounter(port=5432) as relay:
        ...connect to 127.0.0.1:relay.port...
        before = relay.turns
        do_the_thing()
        relay.turns - before

``turns_by_client`` counts per connection, by the client's local port (other threads'
connections through the relay then do not count). ``statements_by_client`` counts the
statements each connection sent: the protocol's Query and Execute messages (a pipeline
of five statements is one turn and five statements). The relay reads the protocol in
the clear: connect with ``sslmode=disable``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Any


class RoundTripCounter:
    def __init__(self, host: str = "127.0.0.1", port: int = 5432) -> None:
        self.upstream = (host, port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.port: int = self._listener.getsockname()[1]
        self.turns = 0
        self.turns_by_client: dict[int, int] = {}  # the client's local port -> turns
        self.statements_by_client: dict[int, int] = {}  # the client's local port -> statements
        self._lock = threading.Lock()
        self._closed = False

    def __enter__(self) -> RoundTripCounter:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, (_, client_port) = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # Per connection: who spoke last. A client packet after the server spoke
            # (or the first one) opens a new turn.
            last = {"who": "server", "port": client_port}
            threading.Thread(
                target=self._pump, args=(client, server, "client", last), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(server, client, "server", last), daemon=True
            ).start()

    def _pump(self, src: socket.socket, dst: socket.socket, who: str, last: dict[str, Any]) -> None:
        messages = _FrontendMessages() if who == "client" else None
        try:
            while data := src.recv(65536):
                with self._lock:
                    port = int(last["port"])
                    if who == "client" and last["who"] == "server":
                        self.turns += 1
                        self.turns_by_client[port] = self.turns_by_client.get(port, 0) + 1
                    if messages is not None:
                        sent = messages.statements_in(data)
                        self.statements_by_client[port] = (
                            self.statements_by_client.get(port, 0) + sent
                        )
                    last["who"] = who
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)


class _FrontendMessages:
    """The client's side of the protocol, read as it streams: the startup messages (no
    type byte; an SSL or GSS request is followed by another), then typed messages, of
    which Query ('Q') and Execute ('E') each run one statement."""

    _ENCRYPTION_REQUESTS = (80877103, 80877104)

    def __init__(self) -> None:
        self._buffer = b""
        self._starting = True

    def statements_in(self, data: bytes) -> int:
        self._buffer += data
        count = 0
        while True:
            if self._starting:
                if len(self._buffer) < 8:
                    return count
                length = int.from_bytes(self._buffer[:4], "big")
                if len(self._buffer) < length:
                    return count
                code = int.from_bytes(self._buffer[4:8], "big")
                self._starting = code in self._ENCRYPTION_REQUESTS
                self._buffer = self._buffer[length:]
                continue
            if len(self._buffer) < 5:
                return count
            length = int.from_bytes(self._buffer[1:5], "big")
            if len(self._buffer) < 1 + length:
                return count
            if self._buffer[:1] in (b"Q", b"E"):
                count += 1
            self._buffer = self._buffer[1 + length :]
