"""/metrics under gunicorn's several workers (config/gunicorn.py): a scrape reports the
sum of every worker's counters, whichever worker answers it. The test starts gunicorn
with 4 workers on the test database, sends N duplicate decisions from several threads
(so several workers count some), and scrapes: every scrape says N."""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from approvals.models import User
from approvals.services.tokens import token_issue

from ..durability.conftest import database_url, wait_until
from ..pages.support import expense_started

pytestmark = [pytest.mark.topology, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
GUNICORN = Path(sys.executable).with_name("gunicorn")
WORKERS = 4
N = 60
COUNTER = "approvals_command_duplicates_total"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(port: int, method: str, path: str, body: Any = None, token: str = "") -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    port = _free_port()
    # No PROMETHEUS_MULTIPROC_DIR given: config/gunicorn.py is what sets one up.
    env = {
        **{k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"},
        "DATABASE_URL": database_url(),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "APPROVALS_EMBEDDED_WORKER": "false",
    }
    log = (tmp_path / "gunicorn.log").open("wb")
    proc = subprocess.Popen(
        [str(GUNICORN), "config.wsgi", "-c", "config/gunicorn.py"]
        + ["--workers", str(WORKERS), "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def up() -> bool:
        try:
            return _call(port, "GET", "/healthz")[0] == 200
        except OSError:
            return False

    try:
        wait_until(up, timeout=60, what="gunicorn to answer /healthz")
        metrics_dir = Path(tempfile.gettempdir()) / f"approvals-metrics-{proc.pid}"
        assert metrics_dir.is_dir()
        yield {"port": port, "dir": metrics_dir, "proc": proc}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        shutil.rmtree(Path(tempfile.gettempdir()) / f"approvals-metrics-{proc.pid}", True)


def _scraped(port: int) -> float:
    status, text = _call(port, "GET", "/metrics")
    assert status == 200, text
    found = re.findall(rf'^{COUNTER}\{{command="Decide"\}} ([0-9.e+]+)$', text, re.M)
    return float(found[0]) if found else 0.0


def _decided_once(port: int, subject: str) -> tuple[str, dict[str, str], str]:
    """A request waiting for bob, his approval recorded through the server: the path,
    body and token that make every resend a duplicate."""
    wid = expense_started(subject)
    _, token = token_issue(user=User.objects.get(username="bob"), name="metrics test")
    body = {"decision": "approve", "requestId": f"metrics-{subject}"}
    path = f"/api/workflows/{wid}/decisions"
    status, text = _call(port, "POST", path, body, token)
    assert status == 200 and json.loads(text)["duplicate"] is False, text
    return path, body, token


def test_every_scrape_sees_the_sum_of_all_four_workers(acme: Any, server: dict[str, Any]):
    port = server["port"]
    path, body, token = _decided_once(port, "M-1")

    # when N more of the same decision arrive, from 8 connections at once
    def resend(_: int) -> bool:
        status, text = _call(port, "POST", path, body, token)
        return status == 200 and json.loads(text)["duplicate"] is True

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(resend, range(N)))

    # then several workers counted some (one file each), and each scrape adds them up
    counting = {p.name for p in server["dir"].glob("counter_*.db")}
    assert len(counting) >= 2, counting
    scrapes = [_scraped(port) for _ in range(3 * WORKERS)]
    assert scrapes == [float(N)] * len(scrapes)


def test_a_worker_that_exits_keeps_its_count_in_the_totals(acme: Any, server: dict[str, Any]):
    port = server["port"]
    path, body, token = _decided_once(port, "M-2")
    for _ in range(10):
        assert _call(port, "POST", path, body, token)[0] == 200
    # every worker is told to exit; gunicorn starts new ones
    for file in server["dir"].glob("counter_*.db"):
        os.kill(int(file.stem.split("_")[1]), signal.SIGTERM)
    time.sleep(1)
    wait_until(lambda: _call(port, "GET", "/healthz")[0] == 200, timeout=60, what="new workers")
    assert _scraped(port) == 10.0
