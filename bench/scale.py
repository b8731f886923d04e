"""The same figures at 100,000 and at 10,000,000 events, side by side, in one run.

    .venv/bin/python bench/run_all.py scale        # or: .venv/bin/python bench/scale.py

Two databases filled beforehand by bench/scale_fill.py (a separate step: the 10M fill
takes about an hour on this machine, so ``make bench`` never runs it):

    createdb -h 127.0.0.1 -U postgres approvals_scale_100k   # and approvals_scale_10m
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals_scale_100k \\
        .venv/bin/python manage.py migrate
    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals_scale_100k \\
        .venv/bin/python bench/scale_fill.py --events 100000
    (the same with approvals_scale_10m and --events 10000000)

Each database is measured by a child process of its own (``--measure URL``): starts
and decisions through the command path (bench/inprocess.py's phases, on Acme), the
inbox of a person holding the same number of open tasks in both databases (the most
that a person holds in the smaller one; in each database the person whose count is
nearest, the largest organisation first: the API's first page and the rendered page,
in-process), the search's first page (bench/search_fts.py's
way: ``WorkflowSearch``) as an auditor and as an employee, the audit export and
``audit_verify`` of a sample organisation, the archiver on the oldest month (archived,
then restored: the database is left as it was) and the bytes per event on disk. The
target: no figure worse than 0.8x its 100,000-event value.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    BENCH_SEAL_KEY,
    ROOT,
    VENV_BIN,
    Report,
    bench_database_url,
    filled,
    fmt,
    setup_django,
    summarize_ms,
    verdict,
)

SIZES = (("100k", "approvals_scale_100k"), ("10m", "approvals_scale_10m"))
TARGET = 0.8
SAMPLE_TENANT = "scale-10"  # export and verification (about 2.7% of the events)
BIG_TENANT = "scale-00"  # inbox and search: the largest organisation
MISSING = (
    "{db} is missing or empty: fill it first (a separate step, see bench/scale.py's "
    "docstring): BENCH_DATABASE_URL={url} .venv/bin/python bench/scale_fill.py "
    "--events {events}"
)
# (figure, unit, higher is better)
FIGURES = (
    ("starts/s (in-process, one process)", "starts_s", True),
    ("decisions/s (in-process, one process)", "decisions_s", True),
    ("app CPU ms per command (start or decision)", "cpu_ms", False),
    ("PostgreSQL CPU ms per command", "pg_cpu_ms", False),
    ("inbox API first page p95 ms", "inbox_api_p95", False),
    ("inbox API first page, CPU ms (app + PostgreSQL)", "inbox_api_cpu", False),
    ("inbox page (HTML) p95 ms", "inbox_page_p95", False),
    ("inbox page (HTML), CPU ms (app + PostgreSQL)", "inbox_page_cpu", False),
    ("search p95 ms, auditor, a common word", "search_common_p95", False),
    ("search, auditor, a common word, CPU ms", "search_common_cpu", False),
    ("search p95 ms, auditor, a reference", "search_ref_p95", False),
    ("search, auditor, a reference, CPU ms", "search_ref_cpu", False),
    ("search p95 ms, employee, a common word", "search_own_p95", False),
    ("search, employee, a common word, CPU ms", "search_own_cpu", False),
    ("audit export events/s (JSON Lines)", "export_s", True),
    ("verify_audit events/s (sample organisation)", "verify_s", True),
    ("archiver months/minute (oldest month)", "archive_mpm", True),
    ("archiver events/s (oldest month)", "archive_s", True),
    ("bytes per event on disk (events, partitions, indexes)", "bytes_per_event", False),
    ("fill events/s (bench/scale_fill.py, COPY, 2 processes)", "fill_s", True),
)


def database_url(name: str) -> str:
    parts = urllib.parse.urlsplit(bench_database_url())
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# --- one database, in a child process ---------------------------------------------------


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _timed(n: int, fn: Any, out: dict[str, Any], key: str) -> None:
    """``key``: the p95 ms of ``n`` calls; ``key_cpu``: app + PostgreSQL CPU ms per call
    (bench/cpu_per_op.py's counters), which the shared machine's load moves less."""
    from cpu_per_op import backend_cpu_seconds

    for _ in range(3):
        fn()
    pid = _backend_pid()
    lat = []
    app0, pg0 = time.process_time(), backend_cpu_seconds(pid)
    for _ in range(n):
        t = time.perf_counter()
        fn()
        lat.append(time.perf_counter() - t)
    app, pg = time.process_time() - app0, backend_cpu_seconds(pid) - pg0
    out[key] = summarize_ms(lat)["p95"]
    out[key.replace("_p95", "_cpu")] = (app + pg) * 1000 / n


def inbox_holder(target: int) -> tuple[Any, int]:
    """The person whose open tasks are nearest ``target`` (ties: the largest
    organisation's first, then the lowest id), and how many they hold: so both
    databases' inbox figures read the same size of inbox."""
    from django.db.models import Count

    from approvals.models import PendingTask, User

    counts = (
        PendingTask.objects.filter(assignee__isnull=False)
        .values("assignee", "tenant__slug")
        .annotate(n=Count("id"))
        .values_list("assignee", "tenant__slug", "n")
    )
    best = min(
        counts,
        key=lambda row: (abs(row[2] - target), row[1] != BIG_TENANT, row[0]),
        default=None,
    )
    if best is None:  # nobody holds a task: an empty inbox, of the big organisation
        return User.objects.get(username=f"s{BIG_TENANT[-2:]}-fin1"), 0
    return User.objects.get(pk=best[0]), int(best[2])


def most_open_tasks(url: str) -> int:
    """The most open tasks one person holds in the database at ``url``."""
    import psycopg

    with psycopg.connect(url, connect_timeout=5) as conn:
        row = conn.execute(
            "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM approvals_pendingtask"
            " WHERE assignee_id IS NOT NULL GROUP BY assignee_id) per_person"
        ).fetchone()
        return int(row[0]) if row else 0


def measure(
    n: int, iterations: int, *, archive: bool = True, inbox_tasks: int = 0
) -> dict[str, Any]:
    """Every figure of the database this process is set up for."""
    import inprocess
    from django.db import connection, transaction
    from django.test import Client
    from rest_framework.test import APIClient
    from scale_fill import event_bytes, recorded

    from approvals.access import Role
    from approvals.audit.export import ExportFilter, audit_export
    from approvals.audit.verify import audit_verify
    from approvals.models import Tenant, User, WorkflowEvent
    from approvals.runtime import tenant_scope
    from approvals.web.search import PAGE_SIZE, WorkflowSearch

    out: dict[str, Any] = {"load_before": load_average()}
    fill = recorded()
    out["fill_s"], out["fill_note"] = fill.get("events_per_s"), fill
    size, events = event_bytes()
    out.update(events=events, bytes_per_event=size / events)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM approvals_workflow")
        out["workflows"] = cursor.fetchone()[0]

    # Starts and decisions: bench/inprocess.py's three phases, one process.
    from cpu_per_op import backend_cpu_seconds

    pid = _backend_pid()
    cpu, pg = time.process_time(), backend_cpu_seconds(pid)
    parts = [inprocess._run(n, f"scale-{uuid.uuid4().hex[:8]}")]
    out["cpu_ms"] = (time.process_time() - cpu) * 1000 / (3 * n)
    out["pg_cpu_ms"] = (backend_cpu_seconds(pid) - pg) * 1000 / (3 * n)
    out["starts_s"] = inprocess._aggregate(parts, "start")["ops_s"]
    out["decisions_s"] = inprocess._decisions(parts)["ops_s"]

    big = Tenant.objects.get(slug=BIG_TENANT)
    holder, held = inbox_holder(inbox_tasks)
    out["inbox_user"], out["inbox_tasks"], out["inbox_target"] = holder.username, held, inbox_tasks
    from approvals.services.tokens import token_issue

    _, secret = token_issue(user=holder, name="scale bench")
    api = APIClient(HTTP_HOST="127.0.0.1")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")

    def api_get() -> None:
        response = api.get("/api/me/tasks?limit=50")
        assert response.status_code == 200, response.status_code

    _timed(iterations, api_get, out, "inbox_api_p95")
    browser = Client(HTTP_HOST="127.0.0.1")
    browser.force_login(holder)

    def page_get() -> None:
        response = browser.get("/")
        assert response.status_code == 200, response.status_code

    _timed(iterations, page_get, out, "inbox_page_p95")

    # The search, as bench/search_fts.py runs it: the form, first page, newest first.
    from django.contrib.auth.models import Group
    from django.test import RequestFactory

    auditor = User.objects.get(username=f"s{BIG_TENANT[-2:]}-olga")  # made an auditor here
    auditor.groups.add(Group.objects.get_or_create(name=Role.AUDITOR.value)[0])
    employee = User.objects.filter(tenant=big, username__contains="-emp").order_by("pk").first()
    reference = (
        WorkflowEvent.objects.filter(tenant=big, seq=1)
        .order_by("-id")
        .values_list("workflow__subject_id", flat=True)
        .first()
    )
    factory = RequestFactory()

    def search(who: Any, text: str) -> Any:
        def run() -> None:
            # as the page runs it: acting for the organisation, under its policy
            with transaction.atomic(), tenant_scope.acting_for(who.tenant_id):
                request = factory.get("/search")
                request.user = who
                found = WorkflowSearch({"text": text}, request=request)
                assert found.is_valid(), found.errors
                found.results(limit=PAGE_SIZE + 1)

        return run

    _timed(iterations, search(auditor, "hotel"), out, "search_common_p95")
    _timed(iterations, search(auditor, reference or "EXP"), out, "search_ref_p95")
    _timed(iterations, search(employee, "hotel"), out, "search_own_p95")

    # The audit export and the verifier, of one organisation.
    sample = Tenant.objects.get(slug=SAMPLE_TENANT)
    t = time.perf_counter()
    lines = sum(1 for _ in audit_export(tenant_id=sample.pk, filters=ExportFilter(), fmt="jsonl"))
    out["export_events"] = lines
    out["export_s"] = lines / (time.perf_counter() - t)
    sample_events = WorkflowEvent.objects.filter(tenant=sample).count()
    t = time.perf_counter()
    breaks, checked = audit_verify(tenant=sample)
    out["verify_s"] = sample_events / (time.perf_counter() - t)
    out.update(verify_events=sample_events, verify_workflows=checked, verify_breaks=len(breaks))
    out["verify_first_breaks"] = [str(b) for b in breaks[:3]]

    if archive:
        out.update(_archive_oldest())
    out["load_after"] = load_average()
    return out


def _archive_oldest() -> dict[str, Any]:
    """Archive the oldest month (retention set to one year for its organisations), then
    restore it, so the database is left as it was. Both run with the clock 400 days
    ahead: the fill's last requests (withdrawn by scale_fill, in every month) finished
    on the day of the fill, and a year's retention would keep any month for a year."""
    from approvals import clock
    from approvals.audit.retention import retention_set
    from approvals.models import Tenant, WorkflowEvent

    month = WorkflowEvent.objects.order_by("history_month").values_list("history_month", flat=True)[
        :1
    ][0]
    events = WorkflowEvent.objects.filter(history_month=month).count()
    for tenant in Tenant.objects.all():
        retention_set(tenant=tenant, years=1, by="bench/scale.py")
    try:
        with clock.shifted(dt.timedelta(days=400)):
            return _archive_and_restore(month, events)
    except Exception as exc:  # the figure says why it is missing
        return {
            "archive_error": f"{exc.__class__.__name__}: {exc}"[:400],
            "archive_month": str(month),
        }


def _archive_and_restore(month: dt.date, events: int) -> dict[str, Any]:
    from approvals.audit.archive import month_archive
    from approvals.audit.restore import month_restore

    t = time.perf_counter()
    result = month_archive(month)
    took = time.perf_counter() - t
    assert result.dropped, result
    t = time.perf_counter()
    restored = month_restore(month)
    restore_s = time.perf_counter() - t
    assert sum(restored.values()) == events, (restored, events)
    return {
        "archive_month": str(month),
        "archive_events": events,
        "archive_mpm": 60 / took,
        "archive_s": events / took,
        "restore_s": events / restore_s,
    }


# --- the run: both databases, side by side ---------------------------------------------


def _filled(url: str) -> bool:
    return filled(url, SAMPLE_TENANT)


def _child(url: str, n: int, iterations: int, archive: bool, inbox_tasks: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as tmp:
        out = Path(tmp) / "figures.json"
        env = {k: v for k, v in os.environ.items() if k != "BENCH_RESULT_FILE"}
        env.update(BENCH_DATABASE_URL=url, APPROVALS_ARCHIVE_ROOT=str(Path(tmp) / "archive"))
        args = ["--measure", str(out), "--n", str(n), "--iterations", str(iterations)]
        args += ["--inbox-tasks", str(inbox_tasks)]
        if not archive:
            args.append("--skip-archive")
        subprocess.run(
            [str(VENV_BIN / "python"), str(Path(__file__).resolve()), *args],
            cwd=ROOT,
            env=env,
            check=True,
        )
        return dict(json.loads(out.read_text()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--measure", metavar="FILE", help="(internal) measure one database")
    ap.add_argument("--n", type=int, default=200, help="workflows per phase (starts, decisions)")
    ap.add_argument("--iterations", type=int, default=200, help="timed reads per figure")
    ap.add_argument("--small", default=SIZES[0][1], help="the 100,000-event database")
    ap.add_argument("--large", default=SIZES[1][1], help="the 10,000,000-event database")
    ap.add_argument("--skip-archive", action="store_true", help="leave the archiver out")
    ap.add_argument(
        "--inbox-tasks",
        type=int,
        default=None,
        help="open tasks of the person whose inbox is read (default: the most one person "
        "holds in the smaller database, so both read the same size of inbox)",
    )
    args = ap.parse_args()
    os.environ.setdefault("APPROVALS_AUDIT_SEAL_KEY", BENCH_SEAL_KEY)
    if args.measure:
        setup_django()
        figures = measure(
            args.n,
            args.iterations,
            archive=not args.skip_archive,
            inbox_tasks=args.inbox_tasks or 0,
        )
        Path(args.measure).write_text(json.dumps(figures, default=str))
        return

    report = Report("scale", "Scale: 100,000 and 10,000,000 events side by side")
    found: dict[str, dict[str, Any]] = {}
    urls = {"100k": database_url(args.small), "10m": database_url(args.large)}
    for label, name in (("100k", args.small), ("10m", args.large)):
        if not _filled(urls[label]):
            events = "100000" if label == "100k" else "10000000"
            report.note(MISSING.format(db=name, url=urls[label], events=events))
    if all(_filled(url) for url in urls.values()):
        inbox_tasks = args.inbox_tasks
        if inbox_tasks is None:
            inbox_tasks = most_open_tasks(urls["100k"])
        for label, name in (("100k", args.small), ("10m", args.large)):
            print(f"measuring {name} (load average {load_average()})", flush=True)
            found[label] = _child(
                urls[label], args.n, args.iterations, not args.skip_archive, inbox_tasks
            )
    if len(found) < 2:
        report.note("Not measured: both databases are needed.")
        report.write()
        return
    small, large = found["100k"], found["10m"]
    rows = []
    inbox = (
        f" ({small['inbox_tasks']} and {large['inbox_tasks']} open tasks)"
        if "inbox_tasks" in small and "inbox_tasks" in large
        else ""
    )
    for title, key, higher in FIGURES:
        if key.startswith("inbox_"):
            title += inbox
        a, b = small.get(key), large.get(key)
        if a is None or b is None:
            rows.append([title, a if a is not None else "n/a", b if b is not None else "n/a"])
            rows[-1] += ["n/a", "n/a", "MISS (not measured)"]
            continue
        performance = (b / a) if higher else (a / b)
        rows.append([title, a, b, b / a, performance, verdict(performance >= TARGET)])
    report.table(
        f"The same figures at {small['events']:,} and {large['events']:,} events "
        f"({small['workflows']:,} and {large['workflows']:,} workflows); target: no figure "
        f"worse than {TARGET}x its 100,000-event value",
        ["figure", "100k", "10M", "10M / 100k", "relative (higher is better)", "result"],
        rows,
    )
    for label, figures in found.items():
        report.note(
            f"{label}: load average {figures['load_before']} before, {figures['load_after']}"
            f" after; inbox of {figures['inbox_user']} ({figures['inbox_tasks']:,} open"
            f" tasks); verify_audit checked {figures['verify_events']:,} events of"
            f" {figures['verify_workflows']:,} workflows of {SAMPLE_TENANT}:"
            f" {figures['verify_breaks']} problem(s); archiver month"
            f" {figures.get('archive_month')} ({fmt(figures.get('archive_events', 'n/a'))}"
            f" events){': ' + figures['archive_error'] if 'archive_error' in figures else ''}"
        )
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py scale` (the databases are filled "
        "beforehand by `bench/scale_fill.py`, see bench/scale.py). The starts and decisions "
        "run on the demo organisation Acme in the filled database (its own history is "
        "small; the events table, its partitions and indexes are the filled ones). Inbox, "
        "search and archive timings are in-process (no HTTP), so the load of the shared "
        "machine moves them less than an HTTP figure."
    )
    report.write()


if __name__ == "__main__":
    main()
