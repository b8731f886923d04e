"""Shared plumbing for the benchmarks: the bench database, Django setup, gunicorn,
load generation and the JSON each benchmark hands to ``run_all.py``.

Benchmarks print figures; they are not tests and assert nothing about the code.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

VENV_BIN = ROOT / ".venv" / "bin"
BENCH_DB = "approvals_bench"
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/approvals"
# Same key in-process and under gunicorn, so cursors signed by one verify in the other.
BENCH_SECRET_KEY = "bench-only-secret-key-not-for-production-0123456789"
# The key the benches that seal and verify the history sign with (never production's).
BENCH_SEAL_KEY = "bench-only-seal-key-not-for-production"


# --- the bench database ----------------------------------------------------------------


def bench_database_url() -> str:
    """DATABASE_URL with the database name swapped for ``approvals_bench``."""
    base = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL") or DEFAULT_URL
    parts = urllib.parse.urlsplit(base)
    if os.environ.get("BENCH_DATABASE_URL"):
        return base
    return urllib.parse.urlunsplit(parts._replace(path=f"/{BENCH_DB}"))


def server_env(**extra: str) -> dict[str, str]:
    """The environment every bench process (and gunicorn) runs with."""
    env = dict(os.environ)
    env.update(
        DATABASE_URL=bench_database_url(),
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="false",
        SECRET_KEY=BENCH_SECRET_KEY,
        APPROVALS_HTTPS="false",  # gunicorn serves plain http on loopback
        ALLOWED_HOSTS="127.0.0.1,localhost",
        APPROVALS_EMBEDDED_WORKER="false",
        # The token endpoint is rate limited per client; the benches log in a few times.
        APPROVALS_AUTH_RATE="1000/minute",
    )
    env.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
    env.update(extra)
    return env


def ensure_bench_db(*, migrate: bool = True) -> str:
    """Create ``approvals_bench`` when missing and migrate it. Returns its URL."""
    import psycopg

    url = bench_database_url()
    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            print(f"creating database {name}", flush=True)
            conn.execute(f'CREATE DATABASE "{name}"')
    if migrate:
        subprocess.run(
            [str(VENV_BIN / "python"), "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env=server_env(),
            check=True,
        )
    return url


def filled(url: str, tenant_slug: str) -> bool:
    """Whether the database at ``url`` holds events and the organisation ``tenant_slug``
    (bench/scale_fill.py has filled it)."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM approvals_workflowevent)"
                " AND EXISTS (SELECT 1 FROM approvals_tenant WHERE slug = %s)",
                (tenant_slug,),
            ).fetchone()
            return bool(row and row[0])
    except psycopg.Error:
        return False


_django_ready = False


def setup_django() -> None:
    """Point this process at the bench database and start Django."""
    global _django_ready
    if _django_ready:
        return
    for key, value in server_env().items():
        if key not in os.environ or os.environ[key] != value:
            os.environ[key] = value
    import django

    django.setup()
    _django_ready = True


def seed() -> dict[str, Any]:
    """The demo organisation; returns the users the benches act as."""
    from approvals.demo import seed_demo
    from approvals.models import User

    tenant = seed_demo()
    users = {u.username: u for u in User.objects.filter(tenant=tenant)}
    return {"tenant": tenant, **users}


def api_token(user: Any) -> str:
    from approvals.services.tokens import token_issue

    _, secret = token_issue(user=user, name="bench")
    return secret


def expense_data(i: int) -> dict[str, Any]:
    """₹45,000: the manager, then finance (no VP)."""
    return {"amountPaise": 4_500_000, "currency": "INR", "department": _DEPARTMENTS[i % 7]}


# the demo organisation's departments (approvals.demo.DEPARTMENTS): a start names one
_DEPARTMENTS = ("eng", "fin", "sales", "ops", "mkt", "people", "IT_HARDWARE")


# --- figures ---------------------------------------------------------------------------


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    k = (len(sorted_values) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def summarize_ms(seconds: list[float]) -> dict[str, float]:
    s = sorted(x * 1000 for x in seconds)
    return {
        "n": len(s),
        "p50": percentile(s, 50),
        "p95": percentile(s, 95),
        "p99": percentile(s, 99),
        "max": s[-1] if s else float("nan"),
    }


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


@dataclass
class Report:
    """What one benchmark hands to run_all.py: tables, notes and free Markdown."""

    name: str
    title: str
    tables: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    markdown: list[str] = field(default_factory=list)

    def table(self, title: str, columns: list[str], rows: list[list[Any]]) -> None:
        self.tables.append({"title": title, "columns": columns, "rows": rows})
        print(f"\n{title}")
        widths = [max(len(str(c)), *(len(fmt(r[i])) for r in rows)) for i, c in enumerate(columns)]
        print("  ".join(str(c).ljust(w) for c, w in zip(columns, widths, strict=True)))
        for r in rows:
            print("  ".join(fmt(v).ljust(w) for v, w in zip(r, widths, strict=True)))
        sys.stdout.flush()

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"note: {text}", flush=True)

    def write(self) -> None:
        path = os.environ.get("BENCH_RESULT_FILE")
        if path:
            Path(path).write_text(json.dumps(self.__dict__, indent=1, default=str))


def fmt(value: Any) -> str:
    if isinstance(value, float):
        if value != value:  # nan
            return "n/a"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


# --- gunicorn --------------------------------------------------------------------------


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int
    workers: int
    worker_class: str
    threads: int

    @property
    def argv(self) -> str:
        return " ".join(self.proc.args) if isinstance(self.proc.args, list) else str(self.proc.args)

    def worker_pids(self) -> list[int]:
        out = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid:
                out.append(int(stat.parent.name))
        return sorted(out)

    def rss_mib(self) -> dict[str, float]:
        """Resident memory of the master and each worker, in MiB."""

        def rss(pid: int) -> float:
            try:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
            except OSError:
                pass
            return float("nan")

        workers = [rss(p) for p in self.worker_pids()]
        return {
            "master": rss(self.proc.pid),
            "worker_mean": sum(workers) / len(workers) if workers else float("nan"),
            "worker_max": max(workers) if workers else float("nan"),
            "workers_total": sum(workers),
        }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def gunicorn(
    *, workers: int = 4, worker_class: str = "sync", threads: int = 1, log: Path | None = None
) -> Iterator[Server]:
    """Run the app under gunicorn; always stops it (its whole process group)."""
    port = free_port()
    argv = [
        str(VENV_BIN / "gunicorn"),
        "config.wsgi",
        "-w",
        str(workers),
        "-b",
        f"127.0.0.1:{port}",
        "--worker-class",
        worker_class,
        "--threads",
        str(threads),
        "--backlog",
        "2048",
        "--timeout",
        "60",
        "--log-level",
        "warning",
    ]
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=server_env(), stdout=out, stderr=out, start_new_session=True
    )
    server = Server(proc, port, workers, worker_class, threads)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {proc.returncode}; see {log}")
            try:
                status, _ = request(port, "GET", "/healthz")
                if status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not become ready in 30 s")
            time.sleep(0.1)
        yield server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if log:
            out.close()  # type: ignore[union-attr]


# --- HTTP clients ----------------------------------------------------------------------

_local = threading.local()


def request(
    port: int, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, bytes]:
    """One request on this thread's keep-alive connection (reopened when closed)."""
    conn: http.client.HTTPConnection | None = getattr(_local, "conn", None)
    if conn is None or getattr(_local, "port", None) != port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        _local.conn, _local.port = conn, port
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    for attempt in (1, 2):
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
            return resp.status, payload
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            conn.close()  # the server closed a kept-alive connection: retry once
            if attempt == 2:
                raise
        except BaseException:
            conn.close()
            _local.conn = None
            raise
    raise AssertionError("unreachable")


class _Answered:
    """What a load run says about its answers: the 2xx count and the rate of them."""

    statuses: dict[int, int]
    elapsed: float

    @property
    def ok(self) -> int:
        return sum(n for s, n in self.statuses.items() if 200 <= s < 300)

    @property
    def throughput(self) -> float:
        return self.ok / self.elapsed if self.elapsed else 0.0


@dataclass
class LoadResult(_Answered):
    latencies: list[float]  # seconds, from the intended send time
    statuses: dict[int, int]
    errors: int
    elapsed: float
    late_starts: int = 0  # requests that left more than 5 ms after their intended time

    @property
    def count(self) -> int:
        return len(self.latencies)


def open_loop(
    send: Callable[[int], int], *, rate: float, duration: float, threads: int = 64
) -> LoadResult:
    """Offer ``rate`` requests a second for ``duration`` seconds, whatever the server
    does: request i is due at t0 + i/rate, and its latency counts from that moment,
    so a stalled server shows up as latency (no coordinated omission)."""
    n = int(rate * duration)
    t0 = time.perf_counter() + 0.1
    counter = itertools.count()
    lat: list[float] = [0.0] * n
    codes: list[int] = [0] * n
    late = [0]
    lock = threading.Lock()

    def worker() -> None:
        while True:
            i = next(counter)
            if i >= n:
                return
            intended = t0 + i / rate
            delay = intended - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.005:
                with lock:
                    late[0] += 1
            try:
                codes[i] = send(i)
            except Exception:
                codes[i] = -1
            lat[i] = time.perf_counter() - intended

    pool = [threading.Thread(target=worker, daemon=True) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - t0
    statuses: dict[int, int] = {}
    for c in codes:
        statuses[c] = statuses.get(c, 0) + 1
    return LoadResult(lat, statuses, statuses.get(-1, 0), elapsed, late[0])


def closed_loop(
    send: Callable[[int, int], int | None], *, clients: int, duration: float
) -> LoadResult:
    """``clients`` threads each send back to back for ``duration`` seconds.
    ``send(client, n)`` returns the status, or None when that client has run out."""
    lats: list[list[float]] = [[] for _ in range(clients)]
    codes: list[list[int]] = [[] for _ in range(clients)]
    start = time.perf_counter()
    stop = start + duration

    def worker(c: int) -> None:
        for n in itertools.count():
            if time.perf_counter() >= stop:
                return
            t = time.perf_counter()
            try:
                status = send(c, n)
            except Exception:
                status = -1
            if status is None:
                return
            lats[c].append(time.perf_counter() - t)
            codes[c].append(status)

    pool = [threading.Thread(target=worker, args=(c,), daemon=True) for c in range(clients)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    statuses: dict[int, int] = {}
    for cs in codes:
        for s in cs:
            statuses[s] = statuses.get(s, 0) + 1
    return LoadResult([x for ls in lats for x in ls], statuses, statuses.get(-1, 0), elapsed)


WRK_SCRIPT = ROOT / "bench" / "wrk" / "api.lua"
OUT = ROOT / "bench" / "out"


@dataclass
class WrkResult(_Answered):
    """What wrk measured: statuses, and latency percentiles in ms (send to answer)."""

    requests: int
    statuses: dict[int, int]
    elapsed: float
    latency: dict[str, float]  # n, p50, p95, p99, max, as summarize_ms gives them
    exhausted: int  # decide mode: requests sent after this thread's ids ran out
    socket_errors: int
    cpu: float  # wrk's own CPU, cores busy


def wrk_load(
    port: int,
    mode: str,
    *,
    token: str,
    connections: int = 8,
    duration: float = 10.0,
    threads: int = 2,
    **env: str,
) -> WrkResult:
    """Saturate the server with wrk (C, a small share of the CPU the server needs) for
    ``duration`` seconds: ``connections`` keep-alive connections, each sending its next
    request when the last is answered. ``mode`` and ``env`` as bench/wrk/api.lua reads
    them (decide: WRK_IDS, a file of workflow ids; start: WRK_RUN, WRK_SUBJECT_TYPE,
    WRK_DATA; get: WRK_PATH)."""
    if not shutil.which("wrk"):
        sys.exit("wrk is missing: install Debian's wrk package (make bench does)")
    OUT.mkdir(exist_ok=True)
    out = OUT / f"wrk-{os.getpid()}-{mode}.json"
    out.unlink(missing_ok=True)
    variables = {
        "WRK_MODE": mode,
        "WRK_TOKEN": token,
        "WRK_OUT": str(out),
        "WRK_THREADS": str(threads),
        **{f"WRK_{k.upper()}": v for k, v in env.items()},
    }
    argv = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration:.0f}s", "-s", str(WRK_SCRIPT)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [*argv, f"http://127.0.0.1:{port}"],
        env={**os.environ, **variables},
        check=True,
        stdout=subprocess.DEVNULL,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    got = json.loads(out.read_text())
    out.unlink()
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return WrkResult(
        requests=got["requests"],
        statuses={int(k): v for k, v in got["statuses"].items()},
        elapsed=got["seconds"],
        latency={"n": got["requests"], **{k: got[k] for k in ("p50", "p95", "p99", "max")}},
        exhausted=got["exhausted"],
        socket_errors=got["socket_errors"],
        cpu=cpu / got["seconds"],
    )


def cpu_seconds_of(pids: list[int]) -> float:
    """User+system CPU seconds used so far by ``pids`` (for the server's CPU share)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / tick


def delete_workflows(cur: Any, subject_type: str) -> None:
    """Remove bench workflows and everything hanging off them (bench rows only)."""
    cur.execute("SET LOCAL session_replication_role = replica")  # events are append-only
    sub = "SELECT id FROM approvals_workflow WHERE subject_type = %s"
    for table in (
        "approvals_workflowevent",
        "approvals_pendingtask",
        "approvals_timer",
        "approvals_activityattempt",
        "approvals_startrequest",
    ):
        cur.execute(f"DELETE FROM {table} WHERE workflow_id IN ({sub})", [subject_type])
    cur.execute("DELETE FROM approvals_workflow WHERE subject_type = %s", [subject_type])
