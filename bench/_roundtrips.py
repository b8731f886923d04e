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
connections through the relay then do not count).
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
        try:
            while data := src.recv(65536):
                with self._lock:
                    if who == "client" and last["who"] == "server":
                        self.turns += 1
                        port = int(last["port"])
                        self.turns_by_client[port] = self.turns_by_client.get(port, 0) + 1
                    last["who"] = who
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
