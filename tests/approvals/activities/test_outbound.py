"""Workflow templates reach only the hosts their organisation lists: loopback and private
addresses only when the list allows them, every address checked and connected to as
checked, redirects checked again, and only what the step declares kept in the history."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.test import Client

from approvals.activities import outbound
from approvals.activities.http import KEPT_TOO_LARGE, MAX_KEPT_CHARS, http_call
from approvals.activities.outbound import (
    ENTRY_INVALID,
    HOST_NOT_ALLOWED,
    PRIVATE_REFUSED,
    AllowedHost,
    OutboundRefused,
    address_kind,
    address_refusal,
    allow_list,
)
from approvals.models import (
    ActivityAttempt,
    Tenant,
    User,
    Workflow,
    WorkflowEvent,
    WorkflowTemplate,
)
from approvals.selectors.templates import workflow_template_problems
from approvals.services.templates import DefinitionRefused, workflow_template_publish
from approvals.services.workflows import workflow_start
from approvals.workers.activities import attempt_run

from ..helpers import fast_retries


@pytest.fixture(autouse=True)
def _retries_at_once() -> Iterator[None]:
    """The calls' retry policies try again at once (tests only), so no test waits."""
    with fast_retries():
        yield


class Server:
    """A local HTTP server that answers ``reply`` (or redirects to ``redirect``)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.reply: dict[str, Any] = {"id": 7, "secret": "the loopback-only page"}
        self.redirect: str | None = None
        handler = self._handler()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                server.paths.append(self.path)
                if server.redirect:
                    self.send_response(302)
                    self.send_header("Location", server.redirect)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                payload = json.dumps(server.reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _handle  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


@pytest.fixture
def second() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


# -- the address check -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4 carrying 127.0.0.1
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 carrying 127.0.0.1
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("::ffff:169.254.169.254", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("100.64.0.1", "private"),
        ("::ffff:10.0.0.1", "private"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
    ],
)
def test_addresses_that_are_not_the_internet_are_named(address, kind):
    assert address_kind(address) == kind


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:4700:4700::1111", "8.8.8.8"])
def test_public_addresses_may_be_called(address):
    assert address_kind(address) is None
    assert address_refusal("erp.example.com", address, AllowedHost("erp.example.com")) is None


def test_private_allows_loopback_and_private_but_never_link_local():
    allowed = AllowedHost("erp.internal", private=True)

    assert address_refusal("erp.internal", "127.0.0.1", allowed) is None
    assert address_refusal("erp.internal", "10.0.0.5", allowed) is None
    assert address_refusal("erp.internal", "169.254.169.254", allowed) is not None
    assert address_refusal("erp.internal", "0.0.0.0", allowed) is not None


def test_the_list_reads_one_host_a_line_and_refuses_what_is_not_one():
    hosts = allow_list("ERP.example.com\n\n# the budget service\nbudget.acme.internal private\n")

    assert hosts == {
        "erp.example.com": AllowedHost("erp.example.com"),
        "budget.acme.internal": AllowedHost("budget.acme.internal", private=True),
    }
    with pytest.raises(ValueError) as refused:
        allow_list("erp.example.com\nhttp://evil.example.com/x")
    assert str(refused.value) == ENTRY_INVALID.format(line=2, text="http://evil.example.com/x")


# -- calls -------------------------------------------------------------------------------


def test_loopback_is_refused_unless_the_list_allows_private_addresses(server):
    with pytest.raises(OutboundRefused) as refused:
        http_call("k", {}, params={"url": f"{server.url}/metrics"}, hosts=allow_list("127.0.0.1"))

    assert str(refused.value) == PRIVATE_REFUSED.format(
        host="127.0.0.1", address="127.0.0.1", kind="loopback"
    )
    assert refused.value.retryable is False
    assert server.paths == []

    allowed = http_call(
        "k", {}, params={"url": f"{server.url}/metrics"}, hosts=allow_list("127.0.0.1 private")
    )
    assert allowed == {"status": 200}
    assert server.paths == ["/metrics"]


def test_a_host_not_on_the_list_is_refused(server):
    with pytest.raises(OutboundRefused) as refused:
        http_call("k", {}, params={"url": f"http://localhost:{server.port}/"}, hosts={})

    assert str(refused.value) == HOST_NOT_ALLOWED.format(host="localhost")
    assert server.paths == []


def test_a_redirect_from_an_allowed_host_to_loopback_is_refused(server, second):
    # the ERP is allowed (with its private address); localhost is listed without it
    hosts = allow_list("127.0.0.1 private\nlocalhost")
    server.redirect = f"http://localhost:{second.port}/metrics"

    with pytest.raises(OutboundRefused) as refused:
        http_call("k", {}, params={"url": f"{server.url}/hook"}, hosts=hosts)

    assert "localhost resolves to" in str(refused.value)
    assert "loopback address" in str(refused.value)
    assert server.paths == ["/hook"]
    assert second.paths == []


def test_a_redirect_to_a_host_not_on_the_list_is_refused(server, second):
    server.redirect = f"http://localhost:{second.port}/metrics"

    with pytest.raises(OutboundRefused) as refused:
        http_call("k", {}, params={"url": server.url}, hosts=allow_list("127.0.0.1 private"))

    assert str(refused.value) == HOST_NOT_ALLOWED.format(host="localhost")
    assert second.paths == []


def test_a_name_resolving_to_a_private_address_is_refused_before_connecting(monkeypatch):
    connected: list[object] = []
    monkeypatch.setattr(
        outbound.socket,
        "getaddrinfo",
        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", 80))],
    )
    monkeypatch.setattr(outbound.socket, "create_connection", lambda *a, **k: connected.append(a))

    with pytest.raises(OutboundRefused) as refused:
        http_call(
            "k", {}, params={"url": "http://erp.example.com/"}, hosts=allow_list("erp.example.com")
        )

    assert str(refused.value) == PRIVATE_REFUSED.format(
        host="erp.example.com", address="10.0.0.5", kind="private"
    )
    assert connected == []


def test_one_bad_address_among_good_ones_refuses_the_host(monkeypatch):
    answers = [("93.184.216.34", 80), ("127.0.0.1", 80)]
    monkeypatch.setattr(
        outbound.socket,
        "getaddrinfo",
        lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", a) for a in answers],
    )

    with pytest.raises(OutboundRefused):
        http_call(
            "k", {}, params={"url": "http://erp.example.com/"}, hosts=allow_list("erp.example.com")
        )


def test_the_connection_goes_to_the_checked_address_without_a_second_lookup(monkeypatch, server):
    # A name looked up once: a second lookup (DNS rebinding) would answer loopback.
    lookups: list[str] = []
    connected: list[tuple[str, int]] = []
    really_connect, really_look_up = socket.create_connection, socket.getaddrinfo

    def lookup(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        if host != "erp.example.com":  # the stand-in's own connection
            return really_look_up(host, port, *args, **kwargs)
        lookups.append(host)
        address = "93.184.216.34" if len(lookups) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        connected.append(address)
        return really_connect(("127.0.0.1", server.port))  # stands in for the ERP

    monkeypatch.setattr(outbound.socket, "getaddrinfo", lookup)
    monkeypatch.setattr(outbound.socket, "create_connection", connect)

    result = http_call(
        "k",
        {},
        params={"url": f"http://erp.example.com:{server.port}/", "keep": ["id"]},
        hosts=allow_list("erp.example.com"),
    )

    assert result == {"status": 200, "body": {"id": 7}}
    assert lookups == ["erp.example.com"]
    assert connected == [("93.184.216.34", server.port)]


def test_only_the_declared_fields_are_kept_and_they_are_capped(server):
    hosts = allow_list("127.0.0.1 private")

    assert http_call("k", {}, params={"url": server.url}, hosts=hosts) == {"status": 200}
    kept = http_call("k", {}, params={"url": server.url, "keep": ["id"]}, hosts=hosts)
    assert kept == {"status": 200, "body": {"id": 7}}

    server.reply = {"id": "x" * (MAX_KEPT_CHARS + 1)}
    with pytest.raises(Exception) as refused:
        http_call("k", {}, params={"url": server.url, "keep": ["id"]}, hosts=hosts)
    assert str(refused.value) == KEPT_TOO_LARGE.format(host="127.0.0.1", limit=MAX_KEPT_CHARS)


# -- through the workflow: the activity run and publishing -------------------------------


def _call_doc(url: str, **params: Any) -> dict[str, Any]:
    return {
        "key": "notify",
        "steps": [
            {
                "id": "notify",
                "kind": "action",
                "activity": "http_request",
                "params": {"url": url, "method": "GET", **params},
                "retry": {"max_attempts": 3, "initial_interval": 0, "jitter": False},
            }
        ],
    }


def _run(acme: Tenant) -> str:
    alice = acme.users.get(username="alice")
    started = workflow_start(
        submitter=alice, template_key="notify", subject_type="t", subject_id="1", data={}
    )
    for _ in range(5):
        for pk in ActivityAttempt.objects.filter(
            workflow_id=started.workflow_id, finished_at__isnull=True
        ).values_list("pk", flat=True):
            attempt_run(attempt_id=pk)
    return str(started.workflow_id)


@pytest.mark.django_db
def test_a_call_the_list_no_longer_allows_fails_the_step_for_good_with_the_reason(acme, server):
    # given a template published while loopback was allowed, then the list changed
    acme.outbound_hosts = "127.0.0.1 private"
    acme.save()
    workflow_template_publish(tenant=acme, definition=_call_doc(f"{server.url}/metrics"))
    acme.outbound_hosts = "127.0.0.1"
    acme.save()

    wid = _run(acme)

    reason = PRIVATE_REFUSED.format(host="127.0.0.1", address="127.0.0.1", kind="loopback")
    assert server.paths == []
    assert list(
        ActivityAttempt.objects.filter(workflow_id=wid).values_list("outcome", flat=True)
    ) == ["OutboundRefused"]
    failed = WorkflowEvent.objects.get(workflow_id=wid, type="ActivityFailed")
    assert failed.payload["message"] == reason
    assert Workflow.objects.get(pk=wid).status == "ROLLED_BACK"


@pytest.mark.django_db
def test_the_history_keeps_the_status_and_the_declared_fields_only(acme, server):
    acme.outbound_hosts = "127.0.0.1 private"
    acme.save()
    workflow_template_publish(tenant=acme, definition=_call_doc(server.url, keep=["id"]))

    wid = _run(acme)

    succeeded = WorkflowEvent.objects.get(workflow_id=wid, type="ActivitySucceeded")
    assert succeeded.payload["result"] == {"status": 200, "body": {"id": 7}}
    history = json.dumps(list(WorkflowEvent.objects.filter(workflow_id=wid).values("payload")))
    assert "the loopback-only page" not in history


@pytest.mark.django_db
def test_publishing_a_call_to_a_host_off_the_list_is_refused(acme):
    with pytest.raises(DefinitionRefused) as refused:
        workflow_template_publish(
            tenant=acme, definition=_call_doc("http://127.0.0.1:8000/metrics")
        )

    assert refused.value.path == "$.steps[0].params.url"
    assert refused.value.problem == HOST_NOT_ALLOWED.format(host="127.0.0.1")
    assert not WorkflowTemplate.objects.filter(tenant=acme, key="notify").exists()


@pytest.mark.django_db
def test_publishing_a_call_to_a_listed_loopback_address_without_private_is_refused(acme):
    acme.outbound_hosts = "127.0.0.1"
    acme.save()

    (problem,) = workflow_template_problems(
        tenant_id=acme.pk, doc=_call_doc("http://127.0.0.1:8000/metrics")
    )

    assert problem.problem == PRIVATE_REFUSED.format(
        host="127.0.0.1", address="127.0.0.1", kind="loopback"
    )


def _as(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.mark.django_db
def test_the_admin_refuses_to_save_a_template_calling_a_host_off_the_list(acme):
    before = WorkflowTemplate.objects.count()

    response = _as("fiona").post(
        "/admin/approvals/workflowtemplate/add/?as=json",
        {
            "definition": json.dumps(_call_doc("http://127.0.0.1:8000/metrics")),
            "try_submitter": "alice",
            "try_data": "{}",
        },
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert "127.0.0.1 is not on this organisation&#x27;s list of hosts" in page
    assert "$.steps[0]" not in page  # the problem is told in words, not as a JSON path
    assert WorkflowTemplate.objects.count() == before


@pytest.mark.django_db
def test_an_organisation_admin_sets_the_list_in_the_admin(acme):
    olga = _as("olga")
    url = f"/admin/approvals/tenant/{acme.pk}/change/"

    refused = olga.post(url, {"outbound_hosts": "erp.example.com\nhttp://x/"})
    assert refused.status_code == 200
    assert "is not a host" in refused.content.decode()
    acme.refresh_from_db()
    assert acme.outbound_hosts == ""

    saved = olga.post(url, {"outbound_hosts": "erp.example.com\nbudget.acme.internal private"})
    assert saved.status_code == 302
    acme.refresh_from_db()
    assert allow_list(acme.outbound_hosts) == {
        "erp.example.com": AllowedHost("erp.example.com"),
        "budget.acme.internal": AllowedHost("budget.acme.internal", private=True),
    }
    assert acme.name == "Acme"  # nothing else of the organisation changed


@pytest.mark.django_db
def test_only_organisation_admins_of_their_own_organisation_set_the_list(acme):
    globex = Tenant.objects.create(slug="globex", name="Globex")

    assert _as("fiona").get(f"/admin/approvals/tenant/{acme.pk}/change/").status_code == 403
    assert _as("olga").get(f"/admin/approvals/tenant/{globex.pk}/change/").status_code in (302, 404)
    assert _as("olga").get("/admin/approvals/tenant/add/").status_code == 403
    assert (
        _as("olga").post(f"/admin/approvals/tenant/{acme.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert Tenant.objects.filter(pk=acme.pk).exists()
