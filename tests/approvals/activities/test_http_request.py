"""The built-in ``http_request`` activity against a local HTTP server the test starts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from approvals.activities.http import (
    HttpClientError,
    HttpRequestInvalid,
    HttpServerError,
    HttpTimeout,
    http_call,
)
from approvals.activities.outbound import allow_list
from approvals.models import ActivityAttempt, Workflow
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start
from approvals.workers.activities import attempt_run

from ..helpers import fast_retries


@pytest.fixture(autouse=True)
def _retries_at_once() -> Iterator[None]:
    """The calls' retry policies try again at once (tests only), so no test waits."""
    with fast_retries():
        yield


# The test server listens on loopback: this organisation allows it explicitly.
LOOPBACK = allow_list("127.0.0.1 private")


class Recorder:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: list[tuple[int, Any]] = []  # consumed in order; then 200
        self.delay = 0.0
        self.lock = threading.Lock()


@pytest.fixture
def server() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with recorder.lock:
                recorder.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": json.loads(body) if body else None,
                    }
                )
                status, reply = recorder.replies.pop(0) if recorder.replies else (200, {"ok": 1})
            if recorder.delay:
                threading.Event().wait(recorder.delay)
            payload = json.dumps(reply).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except BrokenPipeError:
                pass  # the client gave up waiting: the time-out test wants that

        do_POST = do_PUT = do_GET = _handle  # noqa: N815

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", recorder
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_sends_the_data_and_the_idempotency_key(server):
    url, recorder = server

    result = http_call(
        "wf-1/notify",
        {"amountPaise": 5, "x": 1},
        params={"url": f"{url}/hook", "body": ["amountPaise"], "keep": ["ok"]},
        hosts=LOOPBACK,
    )

    (request,) = recorder.requests
    assert request["method"] == "POST"
    assert request["path"] == "/hook"
    assert request["headers"]["Idempotency-Key"] == "wf-1/notify"
    assert request["body"] == {"amountPaise": 5}
    assert result == {"status": 200, "body": {"ok": 1}}


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (500, HttpServerError),
        (503, HttpServerError),
        (400, HttpClientError),
        (409, HttpClientError),
    ],
)
def test_5xx_is_retryable_and_4xx_is_not(server, status, error):
    url, recorder = server
    recorder.replies.append((status, {"error": "nope"}))

    with pytest.raises(error) as raised:
        http_call("k", {}, params={"url": url, "body": "data"}, hosts=LOOPBACK)

    assert getattr(raised.value, "retryable", True) is (status >= 500)


def test_a_slow_server_is_a_retryable_timeout(server):
    url, recorder = server
    recorder.delay = 1.0

    with pytest.raises(HttpTimeout):
        http_call("k", {}, params={"url": url, "timeout": 0.2}, hosts=LOOPBACK)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"url": "ftp://x"},
        {"url": "http://x", "method": "TRACE"},
        {"url": "http://x", "body": 7},
    ],
)
def test_bad_params_fail_for_good(params):
    with pytest.raises(HttpRequestInvalid):
        http_call("k", {}, params=params, hosts=LOOPBACK)


def _notify_template(acme: Any, url: str) -> None:
    acme.outbound_hosts = "127.0.0.1 private"
    acme.save(update_fields=["outbound_hosts"])
    workflow_template_publish(
        tenant=acme,
        definition={
            "key": "notify",
            "steps": [
                {
                    "id": "notify",
                    "kind": "action",
                    "activity": "http_request",
                    "params": {"url": f"{url}/erp", "body": "data"},
                    "retry": {"max_attempts": 3, "initial_interval": 0, "jitter": False},
                }
            ],
        },
    )


def _run_open_attempts(workflow_id: str) -> None:
    for _ in range(10):
        open_ids = list(
            ActivityAttempt.objects.filter(
                workflow_id=workflow_id, finished_at__isnull=True
            ).values_list("pk", flat=True)
        )
        if not open_ids:
            return
        for pk in open_ids:
            attempt_run(attempt_id=pk)


@pytest.mark.django_db
def test_a_workflow_retries_a_5xx_and_completes_with_one_key(acme, server):
    # given an ERP that fails once, then answers
    url, recorder = server
    recorder.replies.append((502, {"error": "bad gateway"}))
    _notify_template(acme, url)
    alice = acme.users.get(username="alice")

    # when the workflow runs its attempts
    started = workflow_start(
        submitter=alice,
        template_key="notify",
        subject_type="t",
        subject_id="1",
        data={"amountPaise": 7},
    )
    wid = started.workflow_id
    _run_open_attempts(wid)

    # then two calls carried the same key, and the workflow completed
    keys = {r["headers"]["Idempotency-Key"] for r in recorder.requests}
    assert len(recorder.requests) == 2
    assert keys == {f"{wid}/notify"}
    assert Workflow.objects.get(pk=wid).public_status == "APPROVED"
    outcomes = list(
        ActivityAttempt.objects.filter(workflow_id=wid)
        .order_by("attempt")
        .values_list("attempt", "outcome")
    )
    assert outcomes == [(1, "HttpServerError"), (2, "ok")]


@pytest.mark.django_db
def test_a_workflow_fails_at_once_on_a_4xx(acme, server):
    url, recorder = server
    recorder.replies.append((422, {"error": "unknown vendor"}))
    _notify_template(acme, url)
    alice = acme.users.get(username="alice")

    started = workflow_start(
        submitter=alice, template_key="notify", subject_type="t", subject_id="2", data={}
    )
    wid = started.workflow_id
    _run_open_attempts(wid)

    assert len(recorder.requests) == 1
    assert Workflow.objects.get(pk=wid).status == "ROLLED_BACK"
