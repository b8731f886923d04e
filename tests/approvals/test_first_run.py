"""The README's first command, as a newcomer runs it: ``make run`` on a fresh folder
starts the private PostgreSQL 18, migrates, seeds the demo organisation and serves it
with DEBUG on and the timers and activities in-process. Walked in Chromium with real
data: alice submits an expense with a receipt, bob's inbox lists it and he approves it,
fiona's inbox lists it next, olga's and audrey's homes open, and every page a role
reaches from its home answers 200 with no error in the browser's console. Ctrl-C then
leaves no PostgreSQL running.

This is also where the migrations run on the newest PostgreSQL the project supports (the
suite itself runs on the machine's server, the oldest)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from config import devdb

from .browser import linked_pages
from .files import pdf_bytes

pytestmark = [pytest.mark.browser, pytest.mark.topology, pytest.mark.xdist_group("first_run")]

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 180
# the inbox's decisions are held by the server for their Undo window
# (settings.APPROVALS_UNDO_SECONDS, 8 s under ``make run``) and recorded once it has
# passed: the server's clock decides, so the page is given that long and more.
UNDO_PASSED_MS = 30_000
# Links that sign out, or that answer with a download rather than a page.
NOT_PAGES = ("/accounts/logout/", "/admin/logout/", "/admin/jsi18n/")
DOWNLOADS = (".csv", ".jsonl", "/export")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _postgres_processes(pgdata: Path) -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return [line for line in out.stdout.splitlines() if f"-D {pgdata}" in line]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """``make run`` in its own process group, as a terminal runs it, on a fresh cluster
    and a free port; stopped with Ctrl-C (SIGINT to the group)."""
    pgdata = tmp_path / "pgdata"
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "SECRET_KEY", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
        and not k.startswith("APPROVALS_")
    }
    env |= {
        "APPROVALS_DEV_PGDATA": str(pgdata),
        "APPROVALS_FILES_ROOT": str(tmp_path / "files"),
        "EMAIL_FILE_PATH": str(tmp_path / "sent-mail"),
        "ADDRPORT": f"127.0.0.1:{port}",
    }
    log = (tmp_path / "run.log").open("w")
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "run"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert proc.poll() is None, (tmp_path / "run.log").read_text()
            try:
                with urllib.request.urlopen(f"{base}/accounts/login/", timeout=5) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "run.log").read_text()
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            log.close()
    # Ctrl-C stopped the cluster: no server left on it, and none answering
    assert _postgres_processes(pgdata) == [], (tmp_path / "run.log").read_text()
    assert devdb.url(pgdata) is None
    assert "Stopped the development PostgreSQL." in (tmp_path / "run.log").read_text()


class Visitor:
    """One person's signed-in browser context, collecting what its console reports."""

    def __init__(self, browser: Any, base: str, username: str) -> None:
        self.base = base
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"{self.page.url}: {e}"))
        self.page.goto(f"{base}/accounts/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill("demo")
        self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_load_state()
        assert "/accounts/login/" not in self.page.url, f"{username} could not sign in"
        self.home = self.page.url

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(f"{self.page.url}: {message.text}")

    def visit_all_from_home(self) -> list[str]:
        """Every page linked from home, each answering 200; returns the problems."""
        self.page.goto(self.home)
        problems: list[str] = []
        for url in linked_pages(self.page, self.base, skip=NOT_PAGES):
            if url.endswith(DOWNLOADS) or any(d in url for d in DOWNLOADS):
                answer = self.context.request.get(f"{self.base}{url}")
                status = answer.status
            else:
                response = self.page.goto(f"{self.base}{url}")
                status = response.status if response is not None else 0
            if status != 200:
                problems.append(f"{url} answered {status}")
        return problems + self.errors


def test_make_run_serves_every_role_on_the_embedded_postgresql(
    served: str, browser: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    base = served

    # alice submits an expense with a receipt
    alice = Visitor(browser, base, "alice")
    page = alice.page
    page.goto(f"{base}/workflows/new?template=expense-approval")
    page.get_by_label("Amount").fill("12000.00")
    page.get_by_label("Currency").select_option("INR")
    page.get_by_label("What was it for?").fill("Client visit, Pune")
    page.get_by_label("Department").select_option(label="Engineering")
    page.get_by_label("Reference").fill("E-FIRST-RUN")
    page.get_by_label("Receipts or quotes").set_input_files(
        [{"name": "hotel.pdf", "mimeType": "application/pdf", "buffer": pdf_bytes(pages=1)}]
    )
    page.get_by_role("button", name="Submit", exact=True).click()
    expect(page.locator(".status")).to_have_text("Waiting: Manager")
    expect(page.locator(".flash").last).to_contain_text("hotel.pdf")
    workflow_id = page.url.rstrip("/").rsplit("/", 1)[-1]

    # bob's inbox lists it, and he approves it from there
    bob = Visitor(browser, base, "bob")
    expect(bob.page.get_by_role("heading", name="Waiting for you")).to_be_visible()
    row = bob.page.locator(f'li[data-workflow="{workflow_id}"]')
    expect(row).to_contain_text("E-FIRST-RUN")
    expect(row).to_contain_text("₹12,000.00")
    row.get_by_role("button", name="Approve").click()
    expect(bob.page.get_by_role("button", name="Undo", exact=False)).to_be_visible()
    expect(bob.page.locator(f'li[data-workflow="{workflow_id}"]')).to_have_count(
        0, timeout=UNDO_PASSED_MS
    )

    # fiona's inbox lists it next
    fiona = Visitor(browser, base, "fiona")
    expect(fiona.page.locator(f'li[data-workflow="{workflow_id}"]')).to_contain_text("E-FIRST-RUN")

    # olga's and audrey's homes open
    olga = Visitor(browser, base, "olga")
    audrey = Visitor(browser, base, "audrey")
    for visitor in (olga, audrey):
        response = visitor.page.goto(visitor.home)
        assert response is not None and response.status == 200

    # every page each role reaches from its home answers, with a quiet console
    problems = {
        name: visitor.visit_all_from_home()
        for name, visitor in {
            "alice": alice,
            "bob": bob,
            "fiona": fiona,
            "olga": olga,
            "audrey": audrey,
        }.items()
    }
    assert problems == {name: [] for name in problems}, (tmp_path / "run.log").read_text()[-3000:]

    # what alice sent is recorded once on the embedded cluster, receipt and all
    alice.page.goto(f"{base}/workflows/{workflow_id}")
    expect(alice.page.locator(".timeline")).to_contain_text("Bob approved the Manager step")
    expect(alice.page.locator("#files")).to_contain_text("hotel.pdf")
