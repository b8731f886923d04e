"""Fixtures for the durability tests: real Celery workers and pollers as separate
processes (killed with SIGKILL), a real Redis broker on its own database number,
the real PostgreSQL test database. Nothing is mocked.

The worker and the pollers must see what the test commits, so these tests use
``django_db(transaction=True)``; they reach the pytest-django test database through
DATABASE_URL built from the settings the test runs under."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis

from tests.per_worker import redis_url_of_worker

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
# One database number per xdist worker (5 for gw0, 6 for gw1): each test flushes it.
BROKER_URL = redis_url_of_worker(
    os.environ.get("DURABILITY_BROKER_URL", "redis://127.0.0.1:6379/5")
)


def wait_until(
    predicate: Callable[[], Any], *, timeout: float, interval: float = 0.1, what: str = ""
) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what or predicate}")
        time.sleep(interval)


def database_url() -> str:
    """The URL of the database this test runs on (pytest-django's test database)."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = quote(db.get("HOST") or "127.0.0.1", safe="")  # a socket folder is a path
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def kill(self) -> None:
        """SIGKILL the process and everything it started (a worker's pool children)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=30)

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


@dataclass
class Processes:
    """Starts workers and pollers; every one is killed at teardown."""

    tmp: Path
    env: dict[str, str]
    started: list[Proc] = field(default_factory=list)

    def start(self, name: str, *args: str) -> Proc:
        """A Python script of this directory (or any argument list for the interpreter)."""
        return self.spawn(name, [sys.executable, *args])

    def spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Proc:
        log = self.tmp / f"{name}-{len(self.started)}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=env or self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        proc = Proc(name, popen, log)
        self.started.append(proc)
        return proc

    def worker(self, queues: str, broker_url: str | None = None) -> Proc:
        env = {**self.env, "CELERY_BROKER_URL": broker_url} if broker_url else None
        return self.spawn("worker", [sys.executable, str(HERE / "worker.py"), queues], env)

    def redis_server(self, port: int) -> Proc:
        """A private Redis that keeps nothing on disk: a restart loses every message."""
        argv = [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        proc = self.spawn("redis", argv)
        client = redis.Redis(port=port, socket_connect_timeout=1)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        wait_until(answers, timeout=30, what=f"redis-server on port {port}")
        client.close()
        return proc

    def drain(self, shift: float, batch: int = 200, go_file: Path | None = None) -> Proc:
        args = [str(HERE / "poller.py"), "drain", str(shift), str(batch)]
        return self.start("poller", *args, *([str(go_file)] if go_file else []))

    def scheduler(self, interval: float = 0.5, redispatch_after: float = 3.0) -> Proc:
        return self.start(
            "scheduler", str(HERE / "poller.py"), "loop", str(interval), str(redispatch_after)
        )

    def stop_all(self) -> None:
        for proc in self.started:
            if proc.popen.poll() is None:
                proc.kill()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} {p.pid} ({p.log.name})\n{p.tail()}" for p in self.started)


def use_broker(url: str | None) -> None:
    """Point this process's Celery app (what ``attempt_dispatch`` sends with) at ``url``
    (None: back to the configured broker). Celery reads CELERY_BROKER_URL from the
    environment before its settings, so the write URL is the setting that can move."""
    from kombu import pools

    from config.celery import app

    pools.reset()
    app.conf["broker_write_url"] = url
    vars(app)["_pool"] = None
    vars(app.amqp)["_producer_pool"] = None


@pytest.fixture
def broker(settings: Any) -> Iterator[redis.Redis]:
    """An empty Redis database for the broker, used by this process and the workers."""
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
def queue() -> str:
    """A queue of this test's own, so that a message another run of the suite left on
    the same Redis database never reaches this test's worker, nor the other way."""
    return f"durability-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def effects_table(transactional_db: None) -> None:
    from .activities import effect_table_clear

    effect_table_clear()


@pytest.fixture
def processes(
    tmp_path: Path, broker: redis.Redis, request: pytest.FixtureRequest
) -> Iterator[Processes]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER_URL,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "PYTHONUNBUFFERED": "1",
    }
    procs = Processes(tmp_path, env)
    try:
        yield procs
    finally:
        procs.stop_all()
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            print(procs.logs())


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report
