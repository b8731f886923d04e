"""Racing helpers for the concurrency tests: real threads lined up on a barrier,
real HTTP against the live server, and the checks every race ends with."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
from django.db import connection

T = TypeVar("T")

# How long a thread waits at a barrier for the others before the race counts as broken.
BARRIER_TIMEOUT = 60.0
HTTP_TIMEOUT = 60.0


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any


class HttpClient:
    """One user's view of the live server: JSON over HTTP with a Bearer token. One
    instance can be shared by many threads."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.headers = {"Authorization": f"Bearer {token}"}
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()

    @property
    def _session(self) -> requests.Session:
        # One keep-alive connection per thread (a session is not thread-safe); each
        # holds a server thread and its database connection until ``close``.
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            with self._lock:
                self._sessions.append(session)
        return session

    def close(self) -> None:
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()

    def post(self, path: str, body: dict[str, Any], **headers: str) -> Reply:
        response = self._session.post(
            f"{self.base_url}{path}",
            json=body,
            headers={**self.headers, **headers},
            timeout=HTTP_TIMEOUT,
        )
        try:
            payload = response.json()
        except ValueError:  # a 500 page: keep the text so the failure shows it
            payload = response.text
        return Reply(response.status_code, payload)

    def decide(self, workflow_id: str, decision: str, request_id: str) -> Reply:
        return self.post(
            f"/api/workflows/{workflow_id}/decisions",
            {"decision": decision, "requestId": request_id},
        )


def in_thread(fn: Callable[[], T]) -> Callable[[], T]:
    """``fn`` wrapped to close the thread's database connection when it ends."""

    def run() -> T:
        try:
            return fn()
        finally:
            connection.close()

    return run


def race(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Run every call in its own thread, released together by a barrier so they
    overlap as much as threads can; results in the order of ``calls``."""
    barrier = threading.Barrier(len(calls))

    def lined_up(fn: Callable[[], T]) -> Callable[[], T]:
        def run() -> T:
            barrier.wait(timeout=BARRIER_TIMEOUT)
            return fn()

        return in_thread(run)

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(lined_up(fn)) for fn in calls]
        return [f.result() for f in futures]


def assert_history_intact(workflow_id: Any) -> None:
    """The workflow's version is its number of events and the hash chain holds."""
    from approvals.audit.verify import chain_verify as verify_chain
    from approvals.models import Workflow, WorkflowEvent

    wf = Workflow.objects.get(pk=workflow_id)
    assert wf.version == WorkflowEvent.objects.filter(workflow=wf).count()
    assert verify_chain(workflow=wf) is None
