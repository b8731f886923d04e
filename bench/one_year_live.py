"""A year live at 10,000,000 events: the job archive-history on the filled history, the
live database and the archive it leaves, archived requests read in place, and what a
read replica would take off the primary.

    .venv/bin/python bench/run_all.py one_year_live   # or: .venv/bin/python bench/one_year_live.py

Needs the 10,000,000-event database of bench/scale.py, filled beforehand (its docstring
gives the recipe). First the copy of it that part 2 works on (``CREATE DATABASE ...
TEMPLATE``, which needs the filled database idle; the filled one stays as bench/scale.py
needs it); then three parts, each in a child process of its own:

1. **Replica reads, at 10M** (on the filled database): the CPU milliseconds (the app
   process and its PostgreSQL backend, read as bench/cpu_per_op.py reads them) of the
   reads ``DATABASE_REPLICA_URL`` sends to a replica: one search (the search page as the
   largest organisation's auditor, a reference and a common word), one audit export of
   an organisation's month (JSON Lines), one analytics page (the default twelve weeks,
   after the job fold-analytics has folded the filled step visits, as it does in
   service), and one ``verify_audit`` of an organisation.
2. **One year live** (on the copy): the job archive-history's function
   (``months_archive_due``, what the Celery task ``approvals.archive_history`` runs)
   with the default live window (twelve months) and the filesystem store in a
   directory of its own; the database's size and the events' (partitions and indexes)
   before and after; the archive's bytes per event; ``VACUUM (ANALYZE)`` of the live
   database, and the same reading every page (``DISABLE_PAGE_SKIPPING``, as an
   anti-wraparound vacuum does); and a backup (``pg_dump -Fc``: a base backup copies
   the whole cluster, never one database).
3. **Read in place**, on the copy: the request page of an archived request, signed in
   as its submitter, and the search page finding it by its reference, each over
   ``--reads`` requests of as many archived requests of the largest organisation picked
   at random (Django's test client, in-process); the same for requests of a live month.

The copy (``approvals_scale_1y``) and its archive directory are left for a later look;
a later run replaces both.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
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
    setup_django,
    summarize_ms,
)

SOURCE = "approvals_scale_10m"
TARGET = "approvals_scale_1y"
MADE_BY = "bench/one_year_live.py"
BIG_TENANT = "scale-00"  # the largest organisation: search, analytics, reads in place
SAMPLE_TENANT = "scale-10"  # the export and verification (as bench/scale.py)
MISSING = (
    "{db} is missing or empty: fill it first (bench/scale.py's docstring): "
    "BENCH_DATABASE_URL={url} .venv/bin/python bench/scale_fill.py --events 10000000"
)
MIB = 2**20
# each part's figures of its last run, a file a part, so one part can run again alone
LAST = ROOT / "bench" / "results"


def _last(part: str) -> dict[str, Any] | None:
    path = LAST / f"one_year_live.{part}.json"
    return dict(json.loads(path.read_text())) if path.exists() else None


def _keep(part: str, figures: dict[str, Any]) -> None:
    LAST.mkdir(parents=True, exist_ok=True)
    (LAST / f"one_year_live.{part}.json").write_text(json.dumps(figures, indent=1, default=str))


def database_url(name: str) -> str:
    parts = urllib.parse.urlsplit(bench_database_url())
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _admin(url: str) -> str:
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(url)._replace(path="/postgres"))


def _pg_args(url: str) -> list[str]:
    parts = urllib.parse.urlsplit(url)
    args = ["-h", parts.hostname or "127.0.0.1", "-p", str(parts.port or 5432)]
    return [*args, "-U", parts.username or "postgres"]


# --- in a child process, on one database ---------------------------------------------------


def _backend_pid() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def _timed(calls: list[Callable[[], None]], warm: int = 3) -> dict[str, float]:
    """Each call once (after ``warm`` calls of the first ones): latency p50 and p95 in
    ms, and the app's and the PostgreSQL backend's CPU ms per call."""
    from cpu_per_op import backend_cpu_seconds

    for call in calls[:warm]:
        call()
    pid = _backend_pid()
    lat = []
    app0, pg0 = time.process_time(), backend_cpu_seconds(pid)
    for call in calls:
        t = time.perf_counter()
        call()
        lat.append(time.perf_counter() - t)
    app, pg = time.process_time() - app0, backend_cpu_seconds(pid) - pg0
    s = summarize_ms(lat)
    n = len(calls)
    return {
        "n": n,
        "p50": s["p50"],
        "p95": s["p95"],
        "app_ms": app * 1000 / n,
        "pg_ms": pg * 1000 / n,
    }


def _client(user: Any) -> Any:
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    return client


def _auditor(tenant_slug: str) -> Any:
    """The organisation's ``olga``, made an auditor (as bench/scale.py does)."""
    from django.contrib.auth.models import Group

    from approvals.access import Role
    from approvals.models import User

    olga = User.objects.get(username=f"s{tenant_slug[-2:]}-olga")
    olga.groups.add(Group.objects.get_or_create(name=Role.AUDITOR.value)[0])
    return olga


def _month_start(months_back: int) -> dt.date:
    from approvals import clock
    from approvals.runtime.partitions import month_add

    return month_add(clock.now().astimezone(dt.UTC).date().replace(day=1), -months_back)


def _bounds(month: dt.date) -> tuple[dt.datetime, dt.datetime]:
    from approvals.runtime.partitions import month_add

    end = month_add(month, 1)
    return (
        dt.datetime(month.year, month.month, 1, tzinfo=dt.UTC),
        dt.datetime(end.year, end.month, 1, tzinfo=dt.UTC),
    )


def replica_reads(iterations: int) -> dict[str, Any]:
    """The CPU of each read a replica takes, on the database this process is set up for."""
    from approvals.audit.export import ExportFilter, audit_export
    from approvals.audit.verify import audit_verify
    from approvals.models import Tenant, WorkflowEvent
    from approvals.runtime.rollup import rollup_fold

    out: dict[str, Any] = {"load_before": load_average()}
    big = Tenant.objects.get(slug=BIG_TENANT)
    sample = Tenant.objects.get(slug=SAMPLE_TENANT)
    out["events"] = WorkflowEvent.objects.count()

    # the job fold-analytics, as it runs within a minute in service
    t = time.perf_counter()
    out["fold_visits"] = rollup_fold()
    out["fold_s"] = time.perf_counter() - t

    auditor = _auditor(BIG_TENANT)
    browser = _client(auditor)
    reference = (
        WorkflowEvent.objects.filter(tenant=big, seq=1)
        .order_by("-id")
        .values_list("workflow__subject_id", flat=True)
        .first()
    )

    def page(path: str) -> Callable[[], None]:
        def get() -> None:
            response = browser.get(path)
            assert response.status_code == 200, (path, response.status_code)

        return get

    reads: dict[str, dict[str, float]] = {}
    reads["search page, auditor, a reference"] = _timed(
        [page(f"/search?text={reference}")] * iterations
    )
    reads["search page, auditor, a common word"] = _timed([page("/search?text=hotel")] * iterations)
    reads["analytics page, auditor (default 12 weeks)"] = _timed(
        [page("/analytics")] * max(10, iterations // 4)
    )

    month = _month_start(6)
    since, until = _bounds(month)
    month_events = WorkflowEvent.objects.filter(
        tenant=sample, created_at__gte=since, created_at__lt=until
    ).count()

    def export() -> None:
        filters = ExportFilter(since=since, until=until)
        for _ in audit_export(tenant_id=sample.pk, filters=filters, fmt="jsonl"):
            pass

    reads[f"audit export, {SAMPLE_TENANT}'s {month:%B %Y} (JSON Lines)"] = _timed(
        [export] * 5, warm=1
    )
    sample_events = WorkflowEvent.objects.filter(tenant=sample).count()

    def verify() -> None:
        breaks, _ = audit_verify(tenant=sample)
        assert not breaks, breaks[:3]

    reads[f"verify_audit, {SAMPLE_TENANT}"] = _timed([verify], warm=0)
    out.update(
        reads=reads,
        reference=reference,
        export_month=f"{month:%Y-%m}",
        export_events=month_events,
        verify_events=sample_events,
        load_after=load_average(),
    )
    return out


def _sizes() -> dict[str, Any]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        database = int(cursor.fetchone()[0])
        cursor.execute(
            "SELECT coalesce(sum(pg_total_relation_size(relid)), 0), count(*) FILTER"
            " (WHERE relid <> 'approvals_workflowevent'::regclass AND isleaf)"
            " FROM pg_partition_tree('approvals_workflowevent')"
        )
        events_bytes, partitions = cursor.fetchone()
        cursor.execute(
            "SELECT count(*), count(DISTINCT history_month) FROM approvals_workflowevent"
            " WHERE history_month IS NOT NULL"
        )
        events, months = cursor.fetchone()
    return {
        "database": database,
        "events_bytes": int(events_bytes),
        "partitions": int(partitions),
        "events": int(events),
        "months": int(months),
    }


def _vacuum(options: str) -> float:
    from django.db import connection

    t = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ({options})")
    return time.perf_counter() - t


def one_year(reads: int, archive_root: Path, dump_dir: Path) -> dict[str, Any]:
    """The job on the copy, what it leaves, a vacuum, a backup and reads in place."""
    from django.conf import settings
    from django.db import connection

    from approvals.audit.archive_job import months_archive_due
    from approvals.audit.models import ArchivedMonth, ArchivedWorkflow, RetentionPolicy
    from approvals.models import Tenant, User, Workflow

    out: dict[str, Any] = {"load_before": load_average()}
    # the default spans: bench/scale.py sets a year's retention on every organisation
    out["policies_removed"] = RetentionPolicy.objects.filter(set_by="bench/scale.py").delete()[0]
    out["policies_left"] = RetentionPolicy.objects.count()
    out["live_months"] = int(settings.APPROVALS_LIVE_MONTHS)
    out["retention_years"] = int(settings.APPROVALS_RETENTION_YEARS)
    out["before"] = _sizes()

    t = time.perf_counter()
    run = months_archive_due()  # what the task approvals.archive_history runs
    out["job_s"] = time.perf_counter() - t
    out["archived"] = [f"{m:%Y-%m}" for m in run.archived]
    out["kept"] = {
        f"{m:%Y-%m}": reasons[:2] + [f"({len(reasons)} reasons)"] for m, reasons in run.kept.items()
    }
    out["deleted"] = sum(run.deleted.values())
    dropped = ArchivedMonth.objects.exclude(dropped_at=None)
    out["archived_events"] = sum(dropped.values_list("events", flat=True))
    out["archived_workflows"] = sum(dropped.values_list("workflows", flat=True))
    out["after"] = _sizes()
    files = [p for p in archive_root.rglob("*") if p.is_file()]
    out["archive_bytes"] = sum(p.stat().st_size for p in files)
    out["archive_files"] = len(files)

    out["vacuum_s"] = _vacuum("ANALYZE")
    out["vacuum_full_scan_s"] = _vacuum("ANALYZE, DISABLE_PAGE_SKIPPING")
    out["after_vacuum_database"] = _sizes()["database"]

    dump = dump_dir / f"{connection.settings_dict['NAME']}.dump"
    t = time.perf_counter()
    subprocess.run(
        ["pg_dump", "-Fc", *_pg_args(database_url(connection.settings_dict["NAME"])), "-f"]
        + [str(dump), connection.settings_dict["NAME"]],
        check=True,
    )
    out["dump_s"] = time.perf_counter() - t
    out["dump_bytes"] = dump.stat().st_size
    dump.unlink()

    # read in place: archived requests of the largest organisation, each by its submitter
    big = Tenant.objects.get(slug=BIG_TENANT)
    rng = random.Random(1)
    archived_ids = list(
        ArchivedWorkflow.objects.filter(tenant=big, deleted_at=None, submitter_id__isnull=False)
        .order_by("pk")
        .values_list("workflow_id", flat=True)
    )
    archived = rng.sample(archived_ids, min(reads, len(archived_ids)))
    live_month = _month_start(3)
    since, until = _bounds(live_month)
    live_ids = list(
        Workflow.objects.filter(
            tenant=big, created_at__gte=since, created_at__lt=until, submitter__isnull=False
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    live = rng.sample(live_ids, min(reads, len(live_ids)))
    rows: dict[Any, tuple[int, str]] = {
        pk: (int(submitter), subject)
        for pk, submitter, subject in Workflow.objects.filter(pk__in=archived + live).values_list(
            "pk", "submitter_id", "subject_id"
        )
    }
    clients: dict[int, Any] = {}
    for uid, _ in rows.values():
        if uid not in clients:
            clients[uid] = _client(User.objects.get(pk=uid))

    def request_page(wid: Any, archived: bool) -> Callable[[], None]:
        client = clients[rows[wid][0]]

        def get() -> None:
            response = client.get(f"/workflows/{wid}")
            assert response.status_code == 200, (wid, response.status_code)
            assert (b"read from the archive" in response.content) == archived, wid

        return get

    def search_hit(wid: Any) -> Callable[[], None]:
        client, reference = clients[rows[wid][0]], rows[wid][1]

        def get() -> None:
            response = client.get("/search", {"text": reference})
            assert response.status_code == 200, (wid, response.status_code)
            assert str(wid).encode() in response.content, (wid, reference)

        return get

    out["reads"] = {
        "request page, archived": _timed([request_page(w, True) for w in archived]),
        "request page, live month": _timed([request_page(w, False) for w in live]),
        "search by reference, archived hit": _timed([search_hit(w) for w in archived]),
        "search by reference, live hit": _timed([search_hit(w) for w in live]),
    }
    out["live_month"] = f"{live_month:%Y-%m}"
    out["reads_archived_pool"] = len(archived_ids)
    out["load_after"] = load_average()
    return out


# --- the parent: both parts, side by side --------------------------------------------------


def _made_here(source: str, target: str) -> bool:
    """Whether ``target`` exists and is a copy this script made."""
    import psycopg

    with psycopg.connect(_admin(database_url(source)), autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (target,),
        ).fetchone()
    try:
        return row is not None and json.loads(row[0] or "{}").get("made_by") == MADE_BY
    except ValueError:
        return False


def _copy(source: str, target: str) -> float:
    """``target`` made anew from ``source`` (a template copy); refuses to drop a database
    of that name this script did not make."""
    import psycopg

    with psycopg.connect(_admin(database_url(source)), autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (target,),
        ).fetchone()
        if row is not None:
            if not _made_here(source, target):
                sys.exit(f"{target} exists and was not made by {MADE_BY}: not replaced.")
            conn.execute(f'DROP DATABASE "{target}"')
        fill = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (source,),
        ).fetchone()
        t = time.perf_counter()
        conn.execute(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')
        took = time.perf_counter() - t
        try:
            note = json.loads(fill[0] or "{}") if fill else {}
        except ValueError:
            note = {}
        note.update(made_by=MADE_BY, copied_from=source)
        comment = json.dumps(note).replace("'", "''")
        conn.execute(f"COMMENT ON DATABASE \"{target}\" IS '{comment}'")
    return took


def _child(url: str, args: list[str], archive_root: Path | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="one-year-live-") as tmp:
        out = Path(tmp) / "figures.json"
        env = {k: v for k, v in os.environ.items() if k != "BENCH_RESULT_FILE"}
        env.update(BENCH_DATABASE_URL=url, BENCH_DUMP_DIR=tmp)
        if archive_root is not None:
            env["APPROVALS_ARCHIVE_ROOT"] = str(archive_root)
        subprocess.run(
            [str(VENV_BIN / "python"), str(Path(__file__).resolve()), *args, "--out", str(out)],
            cwd=ROOT,
            env=env,
            check=True,
        )
        return dict(json.loads(out.read_text()))


def _mib(n: float) -> str:
    return f"{n / MIB:,.0f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=("replica", "year"), help="(internal) one part")
    ap.add_argument("--out", help="(internal) where a part writes its figures")
    ap.add_argument("--source", default=SOURCE, help="the filled 10,000,000-event database")
    ap.add_argument("--target", default=TARGET, help="the copy made a year live")
    ap.add_argument("--reads", type=int, default=200, help="timed reads per figure")
    ap.add_argument(
        "--skip-replica",
        action="store_true",
        help="leave part 1 out (its figures of the last run are reported, with their time)",
    )
    ap.add_argument(
        "--skip-year",
        action="store_true",
        help="leave parts 2 and 3 out (their figures of the last run are reported, with their "
        "time)",
    )
    ap.add_argument(
        "--reuse-target",
        action="store_true",
        help="a copy this script made earlier and nothing has archived yet: use it as it is",
    )
    args = ap.parse_args()
    os.environ.setdefault("APPROVALS_AUDIT_SEAL_KEY", BENCH_SEAL_KEY)
    if args.phase:
        setup_django()
        if args.phase == "replica":
            figures = replica_reads(args.reads)
        else:
            root = Path(os.environ["APPROVALS_ARCHIVE_ROOT"])
            figures = one_year(args.reads, root, Path(os.environ["BENCH_DUMP_DIR"]))
        Path(args.out).write_text(json.dumps(figures, default=str))
        return

    report = Report("one_year_live", "One year live at 10,000,000 events")
    source_url = database_url(args.source)
    if not filled(source_url, SAMPLE_TENANT):
        report.note(MISSING.format(db=args.source, url=source_url))
        report.write()
        return
    copy_s: float | None = None
    year: dict[str, Any] | None = None
    if args.skip_year:
        year = _last("year")
    else:
        # the copy first, while nothing reads the filled database (a template copy needs
        # it idle), so its history is the fill's alone
        if args.reuse_target and _made_here(args.source, args.target):
            print(f"{args.target} made earlier: used as it is", flush=True)
        else:
            print(f"copying {args.source} to {args.target}", flush=True)
            copy_s = _copy(args.source, args.target)
    replica: dict[str, Any] | None = _last("replica") if args.skip_replica else None
    if not args.skip_replica:
        print(f"replica reads on {args.source} (load average {load_average()})", flush=True)
        replica = _child(source_url, ["--phase", "replica", "--reads", str(args.reads)])
        replica["at"] = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
        _keep("replica", replica)
    archive_root = Path(tempfile.gettempdir()) / f"{args.target}-archive"
    if not args.skip_year:
        shutil.rmtree(archive_root, ignore_errors=True)
        archive_root.mkdir(parents=True)
        print(f"archive-history on {args.target} (load average {load_average()})", flush=True)
        year = _child(
            database_url(args.target), ["--phase", "year", "--reads", str(args.reads)], archive_root
        )
        year["at"] = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
        year["copy_s"] = copy_s
        _keep("year", year)
    if year is None:
        report.note("One year live: not measured yet (run without --skip-year).")
        report.write()
        return

    before, after = year["before"], year["after"]
    archived_events = year["archived_events"]
    job_s = year["job_s"]
    report.table(
        f"The job archive-history on {before['events']:,} events over {before['months']} "
        f"months (live window {year['live_months']} months, retention "
        f"{year['retention_years']} years; filesystem store)",
        ["figure", "value"],
        [
            ["months archived and dropped", len(year["archived"])],
            ["months kept live", after["months"]],
            ["events archived", archived_events],
            ["workflows archived", year["archived_workflows"]],
            ["job duration, s", job_s],
            ["job events/s", archived_events / job_s if job_s else float("nan")],
            ["events left live", after["events"]],
        ],
    )
    report.table(
        "The live database before and after (pg_database_size; the events' table with its "
        "partitions and indexes)",
        ["figure", f"before ({before['months']} months)", f"after ({after['months']} months)"],
        [
            ["database", _mib(before["database"]), _mib(after["database"])],
            [
                "events, partitions and indexes",
                _mib(before["events_bytes"]),
                _mib(after["events_bytes"]),
            ],
            [
                "event partitions (with the default and next months')",
                before["partitions"],
                after["partitions"],
            ],
            [
                "bytes per live event (events' table)",
                before["events_bytes"] / before["events"],
                after["events_bytes"] / after["events"],
            ],
        ],
    )
    report.table(
        "At one year live: the archive, a vacuum, a backup",
        ["figure", "value"],
        [
            ["archive on disk (gzip JSON Lines and manifests)", _mib(year["archive_bytes"])],
            ["archive bytes per archived event", year["archive_bytes"] / archived_events],
            ["archive files", year["archive_files"]],
            ["VACUUM (ANALYZE), s", year["vacuum_s"]],
            ["VACUUM (ANALYZE, DISABLE_PAGE_SKIPPING), s", year["vacuum_full_scan_s"]],
            ["pg_dump -Fc, s", year["dump_s"]],
            ["pg_dump -Fc, size", _mib(year["dump_bytes"])],
        ],
    )
    read_rows = [
        [name, r["n"], r["p50"], r["p95"], r["app_ms"], r["pg_ms"]]
        for name, r in year["reads"].items()
    ]
    report.table(
        f"Read in place: {BIG_TENANT}'s requests picked at random, each read by its "
        f"submitter (archived: from {year['reads_archived_pool']:,}; live: "
        f"{year['live_month']})",
        ["read", "n", "p50 ms", "p95 ms", "app CPU ms", "PostgreSQL CPU ms"],
        read_rows,
    )
    if replica is not None:
        report.table(
            f"Reads a replica takes, at {replica['events']:,} events: CPU per read (the app "
            "process and its PostgreSQL backend)",
            ["read", "n", "p50 ms", "p95 ms", "app CPU ms", "PostgreSQL CPU ms"],
            [
                [name, r["n"], r["p50"], r["p95"], r["app_ms"], r["pg_ms"]]
                for name, r in replica["reads"].items()
            ],
        )
        report.note(
            f"Replica reads, {replica.get('at', '')}: the export's month holds "
            f"{replica['export_events']:,} events; "
            f"verify_audit checked {replica['verify_events']:,} events; the search's "
            f"reference was {replica['reference']}; fold-analytics folded "
            f"{replica['fold_visits']:,} step visits in {replica['fold_s']:.0f} s first. "
            f"Load average {replica['load_before']} before, {replica['load_after']} after."
        )
    kept = "; ".join(f"{m}: {' '.join(r[:1])} {r[-1]}" for m, r in year["kept"].items())
    report.note(
        f"Archived {', '.join(year['archived']) or 'nothing'}; months the job kept live with "
        f"its first reason: {kept or 'none'}. Retention deleted {year['deleted']} archived "
        f"workflows. {year['policies_removed']} retention policies bench/scale.py had set "
        f"were removed from the copy first ({year['policies_left']} left), so the "
        "deployment's spans apply."
    )
    report.note(
        f"The copy ({args.target}, CREATE DATABASE ... TEMPLATE"
        + (f", {year['copy_s']:.0f} s" if year.get("copy_s") is not None else ", made earlier")
        + f") and its "
        f"archive ({archive_root}) are left in place. pg_dump -Fc wrote to a temporary "
        "directory on the same disk; a base backup (pg_basebackup) copies the whole "
        "cluster and cannot be taken of one database. Load average "
        f"{year['load_before']} before, {year['load_after']} after; run {year.get('at', '')}."
    )
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py one_year_live` (the 10,000,000-event "
        "database is filled beforehand, see bench/scale.py), or "
        "`.venv/bin/python bench/one_year_live.py` alone. Reads are in-process (Django's "
        "test client, no HTTP)."
    )
    report.write()


if __name__ == "__main__":
    main()
