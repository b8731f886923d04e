"""Several nodes, one truth: the multi-node deployment of docs/operations.md run on this
machine, and broken while it works.

The topology: a PostgreSQL cluster of the test's own (initdb in a temporary directory,
so restarting it disturbs no other database on the machine), PgBouncer in transaction
pooling in front of it, two gunicorn nodes, two timer pollers (``manage.py
run_scheduler``) and two Celery workers, all through PgBouncer, on the local RabbitMQ
(a virtual host of the test's own). Clients start workflows (each with an
Idempotency-Key) and approve them (each with a request id) over HTTP on both nodes,
retrying as a client would on a refused connection or a 5xx. Meanwhile one node is
SIGKILLed and started again, PostgreSQL is stopped for a few seconds and started, and
the broker goes away for the test's virtual host: every connection to it is closed and
new ones are refused for a few seconds (the machine's RabbitMQ, and every other virtual
host on it, keeps running).

The nodes also have a streaming replica of the cluster (``pg_basebackup -R``, a hot
standby on a port of its own) as ``DATABASE_REPLICA_URL``. All along, the auditor
searches and exports on both nodes; ``pg_stat_activity`` of both servers, watched
throughout, shows the searches and the exports read on the replica and the commands
written on the primary. Late in the run the replica is stopped for a few seconds and
started again: every search and export asked meanwhile answers in full, from the
primary.

Afterwards every start and decision that got a 2xx is in the history exactly once,
every workflow ran its activity to one success (and the downstream system saw one
effect per workflow), every due reminder fired once, and ``verify_audit`` passes."""

from __future__ import annotations

import contextlib
import functools
import http.client
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from .conftest import ROOT, Processes, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.topology]

WORKFLOWS = 120
CLIENTS = 10
SCRIPT = Path(__file__).resolve().with_name("multinode.py")
GUNICORN = Path(sys.executable).with_name("gunicorn")
RABBIT = os.environ.get("MULTINODE_RABBITMQ", "127.0.0.1:5672")
PG_BIN = (
    Path("/usr/lib/postgresql")
    / (
        sorted(os.listdir("/usr/lib/postgresql"))[-1]
        if Path("/usr/lib/postgresql").is_dir()
        else "-"
    )
    / "bin"
)
OUTAGE = 3.0  # seconds each of PostgreSQL and RabbitMQ stays down


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
        return True
    return False


def as_postgres(*argv: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv]


def run(argv: list[str], timeout: float = 120) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{argv} failed: {done.stdout}{done.stderr}"
    return done.stdout


@dataclass
class Cluster:
    """A PostgreSQL cluster in a directory owned by ``postgres``."""

    root: Path
    port: int = field(default_factory=free_port)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def create(self) -> None:
        run(
            as_postgres(
                str(PG_BIN / "initdb"),
                "-D",
                str(self.data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            )
        )
        settings = {
            "port": self.port,
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.root}'",
            "fsync": "off",
            "max_connections": 100,
            "shared_buffers": "'64MB'",
        }
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.writelines(f"{k} = {v}\n" for k, v in settings.items())
        self.start()

    def pg_ctl(self, *args: str) -> None:
        run(as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-w", *args))

    def start(self) -> None:
        self.pg_ctl("-l", str(self.root / "postgresql.log"), "start")

    def stop(self) -> None:
        self.pg_ctl("-m", "fast", "stop")

    def restart(self) -> None:
        self.stop()
        time.sleep(OUTAGE)
        self.start()


# The application name the nodes' connections carry (libpq's PGAPPNAME), by which the
# watcher tells them from its own in pg_stat_activity.
NODE_APP = "approvals-multinode"


def standby_of(primary: Cluster, root: Path) -> Cluster:
    """A hot standby streaming from ``primary``: a base backup with ``-R`` (the standby
    signal and the primary's connection), on a port and socket folder of its own."""
    root.mkdir()
    shutil.chown(root, "postgres", "postgres")
    standby = Cluster(root)
    run(
        as_postgres(
            str(PG_BIN / "pg_basebackup"),
            *("-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres"),
            *("-D", str(standby.data), "-R", "-X", "stream"),
        ),
        timeout=300,
    )
    with (standby.data / "postgresql.conf").open("a") as conf:
        conf.write(f"port = {standby.port}\nunix_socket_directories = '{root}'\nhot_standby = on\n")
    standby.start()
    return standby


@dataclass
class Watcher:
    """Every statement the nodes' connections were seen running on each server, from
    ``pg_stat_activity`` polled by a connection of the watcher's own."""

    ports: dict[str, int]  # server name -> port
    seen: dict[str, set[str]] = field(default_factory=dict)
    stop: threading.Event = field(default_factory=threading.Event)

    def poll(self) -> None:
        import psycopg

        while not self.stop.wait(0.2):
            for name, port in self.ports.items():
                url = f"postgres://postgres@127.0.0.1:{port}/approvals"
                with contextlib.suppress(psycopg.Error):  # a server away for a fault
                    with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
                        rows = conn.execute(
                            "SELECT query FROM pg_stat_activity WHERE application_name = %s",
                            [NODE_APP],
                        ).fetchall()
                    self.seen.setdefault(name, set()).update(str(q) for (q,) in rows)

    def statements(self, server: str, table: str) -> list[str]:
        """What the nodes ran on ``server`` reading or writing ``table``."""
        return [q for q in self.seen.get(server, ()) if f'"{table}"' in q or f" {table} " in q]


def pgbouncer_config(root: Path, db_port: int, port: int) -> Path:
    """Transaction pooling; the app's own statements are not prepared
    (APPROVALS_DB_PREPARE_THRESHOLD=off), as this PgBouncer cannot keep them."""
    (root / "userlist.txt").write_text('"postgres" ""\n')
    conf = root / "pgbouncer.ini"
    conf.write_text(
        "[databases]\n"
        f"approvals = host=127.0.0.1 port={db_port} dbname=approvals user=postgres\n"
        "[pgbouncer]\n"
        f"listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {root / 'userlist.txt'}\n"
        "pool_mode = transaction\nmax_client_conn = 200\ndefault_pool_size = 20\n"
        "server_login_retry = 1\nserver_check_delay = 0\n"
        "ignore_startup_parameters = extra_float_digits,options\n"
    )
    return conf


def rabbitmqctl(*args: str) -> str:
    return run(["rabbitmqctl", "-q", *args])


@contextlib.contextmanager
def rabbit_vhost() -> Iterator[str]:
    vhost = f"approvals-multinode-{uuid.uuid4().hex[:8]}"
    rabbitmqctl("add_vhost", vhost)
    rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
    try:
        yield vhost
    finally:
        with contextlib.suppress(AssertionError, subprocess.TimeoutExpired):
            rabbitmqctl("delete_vhost", vhost)


def broker_outage(vhost: str) -> None:
    """The broker away for the test's virtual host only: its connections closed and new
    ones refused (no permission) for ``OUTAGE`` seconds, then allowed again. Nothing of
    the machine's RabbitMQ outside ``vhost`` is touched (no ``stop_app``)."""
    rabbitmqctl("clear_permissions", "-p", vhost, "guest")
    try:
        rabbitmqctl("close_all_connections", "-p", vhost, "broker outage (test)")
        time.sleep(OUTAGE)
    finally:
        rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")


def request(port: int, method: str, path: str, token: str, body: Any, **headers: str) -> Any:
    """(status, answer) of one HTTP request; raises OSError when the node is away."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.request(
            method,
            path,
            body=None if body is None else json.dumps(body),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                **headers,
            },
        )
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw.startswith(b"{") else {}
    except http.client.HTTPException as exc:
        raise OSError(str(exc)) from exc
    finally:
        conn.close()


def read(port: int, path: str, token: str) -> tuple[int, bytes]:
    """(status, body) of one GET; status 0 when the node is away or the answer is cut."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException):
        return 0, b""
    finally:
        conn.close()


SEARCH = "/api/workflows?template=multinode&limit=20"
EXPORT = "/api/audit/export?format=jsonl"


@dataclass
class Readers:
    """The auditor searching and exporting on either node until stopped: each answer
    by when it was asked (time.monotonic()), what was read and its status. A search is
    whole when it parses; an export when its last line is its signed summary (a stream
    cut part way has none). An export asked before the replica went away may be cut
    when it goes: the primary reads it again, and when commands have changed its first
    rows since, the rows already sent cannot be taken back (replica.streamed_from_replica)."""

    ports: list[int]
    token: str
    answers: list[tuple[float, str, int]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            for kind, path in (("search", SEARCH), ("export", EXPORT)):
                asked = time.monotonic()
                status, body = read(random.choice(self.ports), path, self.token)
                if status == 200 and not self._whole(kind, body):
                    status = 0  # cut part way: not an answer
                self.answers.append((asked, kind, status))
                if status not in (0, 200) and status < 500:
                    self.failures.append(f"{path}: {status} {body[:300]!r}")
            time.sleep(0.1)

    @staticmethod
    def _whole(kind: str, body: bytes) -> bool:
        try:
            if kind == "search":
                return isinstance(json.loads(body)["workflows"], list)
            last = json.loads(body.rstrip().rsplit(b"\n", 1)[-1])
            return "export" in last
        except (ValueError, KeyError):
            return False

    def between(self, start: float, end: float) -> list[tuple[str, int]]:
        return [(kind, status) for at, kind, status in self.answers if start <= at <= end]


@dataclass
class Clients:
    """What the clients did: every 2xx by request id, and every try."""

    ports: list[int]
    tokens: dict[str, str]
    lock: threading.Lock = field(default_factory=threading.Lock)
    accepted: dict[str, str] = field(default_factory=dict)  # request id -> workflow id
    requests: int = 0
    retried: int = 0  # tries, sends and reads alike, that met a node or database away
    done: int = 0
    failures: list[str] = field(default_factory=list)

    def send(self, user: str, path: str, body: Any, rid: str, **headers: str) -> dict[str, Any]:
        """Send until a 2xx, on either node, as a client that keeps its request id. A
        refused or cut connection and a 5xx (a node that lost its database, or busy) are
        tried again; any other answer, a 404 or a 409 included, fails: the caller waits
        for what the request needs first (``task_waiting``)."""
        deadline = time.monotonic() + 120
        while True:
            port = random.choice(self.ports)
            with self.lock:
                self.requests += 1
            try:
                status, answer = request(port, "POST", path, self.tokens[user], body, **headers)
            except OSError:
                status, answer = 0, {}
            if 200 <= status < 300:
                return dict(answer)
            # 0: refused or cut; 5xx: a node that lost its database.
            if status != 0 and status < 500:
                raise AssertionError(f"{path}: {status} {answer}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{path}: no 2xx in 120 s (last {status} {answer})")
            with self.lock:
                self.retried += 1
            time.sleep(0.2)

    def _met(self, status: int) -> None:
        """Count a read that met a fault (refused, cut, 5xx) as a retry."""
        if status == 0 or status >= 500:
            with self.lock:
                self.retried += 1

    def task_waiting(self, user: str, wid: str) -> None:
        """Wait, reading ``user``'s open tasks on either node (every page), until one of
        ``wid`` is there: the activity before the step has finished and the task is
        theirs, so a decision has something to decide. At most 120 s."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if wid in self._task_workflows(user):
                return
            time.sleep(0.5)
        raise AssertionError(f"workflow {wid}: no task for {user} in 120 s")

    def _task_workflows(self, user: str) -> set[str]:
        """The workflows of ``user``'s open tasks, or what could be read of them while a
        node or the database is away."""
        found: set[str] = set()
        path = "/api/me/tasks?limit=100"
        while path:
            with self.lock:
                self.requests += 1
            try:
                status, answer = request(
                    random.choice(self.ports), "GET", path, self.tokens[user], None
                )
            except OSError:
                status, answer = 0, {}
            if status != 200:
                self._met(status)
                return found
            found |= {t["workflowId"] for t in answer["items"]}
            cursor = answer.get("nextCursor")
            path = f"/api/me/tasks?limit=100&cursor={quote(cursor)}" if cursor else ""
        return found

    def reminded(self, wid: str) -> None:
        """Wait, reading the workflow on either node, until its reminder was sent."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with self.lock:
                self.requests += 1
            try:
                status, answer = request(
                    random.choice(self.ports),
                    "GET",
                    f"/api/workflows/{wid}",
                    self.tokens["alice"],
                    None,
                )
            except OSError:
                status, answer = 0, {}
            if status == 200 and any(e["type"] == "ReminderSent" for e in answer["history"]):
                return
            self._met(status)
            time.sleep(0.5)
        raise AssertionError(f"workflow {wid}: no reminder in 120 s")

    def workflow(self, n: int) -> None:
        key = f"mn-start-{n}-{uuid.uuid4().hex[:8]}"
        body = {"template": "multinode", "subject": {"type": "multinode", "id": key}}
        started = self.send("alice", "/api/workflows", body, key, **{"Idempotency-Key": key})
        wid = started["workflowId"]
        self.reminded(wid)  # the poller's part, before bob decides
        self.task_waiting("bob", wid)  # the worker's part: the activity before his step
        rid = f"mn-approve-{n}-{uuid.uuid4().hex[:8]}"
        decision = {"decision": "approve", "requestId": rid, "comment": ""}
        self.send("bob", f"/api/workflows/{wid}/decisions", decision, rid)
        with self.lock:
            self.accepted[key] = wid
            self.accepted[rid] = wid
            self.done += 1

    def run(self, numbers: list[int]) -> None:
        for n in numbers:
            try:
                self.workflow(n)
            except AssertionError as exc:
                with self.lock:
                    self.failures.append(str(exc))


@pytest.mark.skipif(os.geteuid() != 0, reason="runs PostgreSQL and PgBouncer as postgres")
@pytest.mark.skipif(not (PG_BIN / "initdb").exists(), reason="no PostgreSQL server binaries")
@pytest.mark.skipif(not shutil.which("pgbouncer"), reason="no pgbouncer (make services)")
@pytest.mark.skipif(not shutil.which("rabbitmqctl"), reason="no RabbitMQ")
def test_several_nodes_lose_nothing_through_node_database_and_broker_restarts() -> None:
    root = Path(tempfile.mkdtemp(prefix="approvals-multinode-"))
    shutil.chown(root, "postgres", "postgres")
    logs = root / "logs"
    logs.mkdir()
    cluster = Cluster(root)
    procs = Processes(logs, dict(os.environ))
    try:
        with rabbit_vhost() as vhost:
            _run(root, cluster, procs, vhost)
    except BaseException:
        print(procs.logs())
        raise
    finally:
        procs.stop_all()
        with contextlib.suppress(AssertionError):
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def _run(root: Path, cluster: Cluster, procs: Processes, vhost: str) -> None:
    # given the topology
    cluster.create()
    run(["createdb", "-h", "127.0.0.1", "-p", str(cluster.port), "-U", "postgres", "approvals"])
    bouncer_port = free_port()
    conf = pgbouncer_config(root, cluster.port, bouncer_port)
    procs.spawn("pgbouncer", as_postgres("pgbouncer", str(conf)))
    wait_until(lambda: listening(bouncer_port), timeout=30, what="pgbouncer")
    queue = "multinode"
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{bouncer_port}/approvals",
        "APPROVALS_DB_PREPARE_THRESHOLD": "off",
        "DATABASE_DISABLE_SERVER_SIDE_CURSORS": "true",
        "CELERY_BROKER_URL": f"amqp://guest:guest@{RABBIT}/{vhost}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "APPROVALS_HTTPS": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONUNBUFFERED": "1",
    }
    procs.env = env
    manage = [sys.executable, str(ROOT / "manage.py")]
    migrate = subprocess.run(
        [*manage, "migrate", "-v0"], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert migrate.returncode == 0, migrate.stderr
    seeded = subprocess.run(
        [sys.executable, str(SCRIPT), "seed", queue],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert seeded.returncode == 0, seeded.stderr
    tokens = json.loads(seeded.stdout.strip().splitlines()[-1])
    # the reads of committed history on a streaming replica of the cluster
    standby = standby_of(cluster, root / "standby")
    env["DATABASE_REPLICA_URL"] = f"postgres://postgres@127.0.0.1:{standby.port}/approvals"
    env["APPROVALS_REPLICA_CHECK_SECONDS"] = "1"
    env["PGAPPNAME"] = NODE_APP
    try:
        _drive(cluster, standby, procs, env, tokens, queue, vhost)
    finally:
        with contextlib.suppress(AssertionError):
            standby.stop()


def _drive(
    cluster: Cluster,
    standby: Cluster,
    procs: Processes,
    env: dict[str, str],
    tokens: dict[str, str],
    queue: str,
    vhost: str,
) -> None:
    manage = [sys.executable, str(ROOT / "manage.py")]
    ports = [free_port(), free_port()]

    def node(i: int) -> Any:
        argv = [str(GUNICORN), "config.wsgi", "-c", "config/gunicorn.py", "--workers", "2"]
        return procs.spawn(f"node{i}", [*argv, "--bind", f"127.0.0.1:{ports[i]}"])

    nodes = [node(0), node(1)]
    for _ in range(2):
        procs.spawn("scheduler", [*manage, "run_scheduler", "--interval", "0.5"])
        procs.spawn("worker", [sys.executable, str(SCRIPT), "worker", queue])
    for port in ports:
        wait_until(functools.partial(listening, port), timeout=60, what=f"node on {port}")

    # when clients drive both nodes while a node, PostgreSQL and RabbitMQ go down, and
    # the auditor searches and exports all along
    clients = Clients(ports, tokens)
    numbers = list(range(WORKFLOWS))
    threads = [
        threading.Thread(target=clients.run, args=(numbers[i::CLIENTS],), daemon=True)
        for i in range(CLIENTS)
    ]
    readers = Readers(ports, tokens["audrey"])
    watcher = Watcher({"primary": cluster.port, "replica": standby.port})
    watching = [
        threading.Thread(target=readers.run, daemon=True),
        threading.Thread(target=watcher.poll, daemon=True),
    ]
    for thread in [*threads, *watching]:
        thread.start()

    def at(fraction: float, fault: str) -> None:
        wait_until(
            lambda: clients.done >= WORKFLOWS * fraction or clients.failures,
            timeout=150,
            what=f"{fraction:.0%} of the workflows",
        )
        print(f"{fault} with {clients.done} of {WORKFLOWS} workflows done")

    at(0.15, "node 0 SIGKILLed")
    killed = nodes[0]
    killed.kill()
    time.sleep(1.0)
    nodes[0] = node(0)
    at(0.35, "PostgreSQL restarted")
    cluster.restart()
    at(0.6, "RabbitMQ away for the test's virtual host")
    broker_outage(vhost)
    at(0.8, "the replica stopped and started")
    standby.stop()
    away = time.monotonic()
    time.sleep(OUTAGE)
    standby.start()
    back = time.monotonic()
    for thread in threads:
        thread.join(timeout=150)
    time.sleep(2.0)  # a few reads from the replica again
    readers.stop.set()
    watcher.stop.set()
    for thread in watching:
        thread.join(timeout=30)
    assert clients.failures == []
    assert clients.done == WORKFLOWS

    # every search and export asked while the replica was away answered in full
    assert readers.failures == []
    while_away = readers.between(away, back)
    assert {kind for kind, _ in while_away} == {"search", "export"}, while_away
    assert [status for _, status in while_away] == [200] * len(while_away), while_away
    print(
        f"{len(readers.answers)} searches and exports, {len(while_away)} while the replica was away"
    )
    # the searches and the exports read on the replica, the commands wrote on the primary
    assert watcher.statements("replica", "approvals_workflow"), watcher.seen.get("replica")
    assert watcher.statements("replica", "approvals_workflowevent"), watcher.seen.get("replica")
    assert not [
        q
        for q in watcher.seen.get("replica", ())
        if q.lstrip().upper().startswith(("INSERT", "UPDATE"))
    ]
    assert watcher.statements("primary", "approvals_workflowevent"), watcher.seen.get("primary")

    # then, once the pollers and workers are through, every 2xx is in the history once
    def settled() -> dict[str, Any] | None:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "report"], env=env, cwd=ROOT, capture_output=True
        )
        if done.returncode != 0:
            return None
        report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        finished = report["statuses"].get("APPROVED", 0) == WORKFLOWS
        return report if finished and report["attempts_open"] == 0 else None

    report = wait_until(settled, timeout=90, interval=1.0, what="every workflow to finish")
    print(
        f"{clients.requests} requests ({clients.retried} retried) over {len(ports)} nodes;"
        f" {report['effect_calls']} activity calls for {report['effects']} effects;"
        f" {report['timers_fired']} reminders fired"
    )
    starts = [k for k in clients.accepted if k.startswith("mn-start-")]
    decisions = [k for k in clients.accepted if k.startswith("mn-approve-")]
    assert len(starts) == len(decisions) == WORKFLOWS
    # each start: one workflow for its subject, one key; each decision: one event
    assert {k: report["by_subject"].get(k) for k in starts} == dict.fromkeys(starts, 1)
    assert {k: report["start_keys"].get(k) for k in starts} == dict.fromkeys(starts, 1)
    assert report["started"] == WORKFLOWS
    assert {r: report["events_by_request"].get(r) for r in decisions} == dict.fromkeys(decisions, 1)
    # every activity completed once, and the downstream system saw one effect each
    workflows = set(clients.accepted.values())
    assert report["succeeded_by_workflow"] == dict.fromkeys(workflows, 1)
    assert report["effects"] == WORKFLOWS
    # every due timer fired, once
    assert report["timers_due_unfired"] == 0
    assert report["timers_dead"] == 0
    assert report["reminders_by_workflow"] == dict.fromkeys(workflows, 1)
    assert report["timers_by_kind"] == {"reminder": WORKFLOWS}
    # and the audit trail holds
    verified = subprocess.run(
        [*manage, "verify_audit"], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "OK:" in verified.stdout
    died = [p.name for p in procs.started if p is not killed and p.popen.poll() is not None]
    assert died == []
    # the faults were met: clients retried, and each worker lost RabbitMQ and came back
    assert clients.retried > 0
    for worker in (p for p in procs.started if p.name == "worker"):
        log = worker.log.read_text(errors="replace")
        assert "Connection to broker lost" in log, worker.tail()
        assert log.count("Connected to amqp://") >= 2, worker.tail()
