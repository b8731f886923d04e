"""Fixtures for the concurrency tests: real HTTP against a live server, real threads,
real PostgreSQL. Nothing here mocks a lock or the database.

The data a race needs must be committed before the threads start, so these tests use
``django_db(transaction=True)``; each worker thread closes its own connection."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .support import HttpClient

LISTEN_BACKLOG = 256


@pytest.fixture
def http(live_server: Any, acme: Any) -> Iterator[Callable[[str], HttpClient]]:
    """``http("bob")``: a client of the live server signed in as bob."""
    # Django's test server listens with a backlog of 10: a burst of connects beyond it
    # is dropped and retried a second later, which would pace the races, not the code.
    live_server.thread.httpd.socket.listen(LISTEN_BACKLOG)
    from approvals.models import User
    from approvals.services.tokens import token_issue

    clients: list[HttpClient] = []

    def make(username: str) -> HttpClient:
        _, secret = token_issue(user=User.objects.get(username=username), name="test")
        clients.append(HttpClient(live_server.url, secret))
        return clients[-1]

    yield make
    for client in clients:
        client.close()
