"""Run every benchmark and rewrite BENCHMARKS.md with their figures.

    make bench        # DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals ...
    .venv/bin/python bench/run_all.py timers activities   # only these; their sections
                                                          # replace theirs in the file

The benchmarks use their own database, ``approvals_bench`` (created and migrated here),
never the test database. Each benchmark runs in its own process, prints its figures and
hands them back as JSON.

BENCHMARKS.md keeps each benchmark's figures, the command and the machine's load. The raw
output a benchmark prints (its Markdown blocks of EXPLAIN plans or cProfile listings) goes
to ``bench/results/explain/<benchmark>.txt`` or ``bench/results/profile/<benchmark>.txt``,
rewritten when that benchmark runs, and its section links the file. A section is found
again by its line ``_`bench/<name>.py`…_``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, VENV_BIN, bench_database_url, ensure_bench_db, fmt, server_env  # noqa: E402

BENCHES: list[tuple[str, list[str]]] = [
    ("engine.py", []),
    ("inprocess.py", []),
    ("http_decisions.py", []),
    ("inbox.py", []),
    ("inbox_lists.py", []),
    ("timers.py", []),
    ("activities.py", []),
    ("audit_export.py", []),
    ("mail_drain.py", []),
    ("long_history.py", []),
    ("profile_decisions.py", []),
    ("cpu_per_op.py", []),
    ("offline_verify.py", []),
    ("analytics.py", []),
    ("upload_rss.py", []),
    ("search_fts.py", []),
    ("archive.py", []),
    ("daily_seal.py", []),
    # The 100,000- and 10,000,000-event databases side by side: filled beforehand by
    # bench/scale_fill.py, never here (the 10M fill takes about an hour).
    ("scale.py", []),
    # On the filled 10,000,000-event database: a copy of it made a year live by the job
    # archive-history, and what a read replica would take off the primary.
    ("one_year_live.py", []),
    ("pgbench_writes.py", []),
]
COMMAND = (
    "make bench  # = DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals "
    "CELERY_BROKER_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/run_all.py"
)
# Where a run's raw output goes, one file per benchmark and kind (relative to the
# checkout): query plans (EXPLAIN) and profiles (cProfile listings).
RAW_DIRS = {"EXPLAIN": Path("bench/results/explain"), "cProfile": Path("bench/results/profile")}


def machine() -> list[list[str]]:
    mem_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    pg = "unknown"
    try:
        import psycopg

        with psycopg.connect(bench_database_url()) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            pg = str(row[0]) if row else pg
    except Exception as exc:  # the figures still say what they can
        pg = f"unknown ({exc.__class__.__name__})"
    return [
        ["CPU", f"{os.cpu_count()} x {cpu}" if cpu else str(os.cpu_count())],
        ["nproc", subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()],
        ["RAM", f"{mem_kib / 1024 / 1024:.1f} GiB"],
        ["Python", platform.python_version()],
        ["PostgreSQL", pg],
        ["OS", platform.platform()],
    ]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def md_table(columns: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for r in rows:
        out.append("| " + " | ".join(fmt(v).replace("|", "\\|") for v in r) + " |")
    return "\n".join(out)


def main() -> None:
    only = [a if a.endswith(".py") else f"{a}.py" for a in sys.argv[1:]]
    known = {script for script, _ in BENCHES}
    if unknown := [a for a in only if a not in known]:
        sys.exit(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    print(f"bench database: {bench_database_url()}", flush=True)
    ensure_bench_db()
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    env = server_env()
    with tempfile.TemporaryDirectory() as tmp:
        for script, extra in BENCHES:
            if only and script not in only:
                continue
            out = Path(tmp) / f"{script}.json"
            before = load_average()
            print(f"\n=== {script} (load average before: {before}) ===", flush=True)
            t = time.perf_counter()
            proc = subprocess.run(
                [str(VENV_BIN / "python"), str(ROOT / "bench" / script), *extra],
                cwd=ROOT,
                env={**env, "BENCH_RESULT_FILE": str(out)},
            )
            took = time.perf_counter() - t
            if proc.returncode != 0 or not out.exists():
                failures.append(f"{script} failed (exit {proc.returncode}) after {took:.0f} s")
                continue
            doc = json.loads(out.read_text())
            doc["seconds"] = took
            doc["load_before"] = before
            doc["started"] = f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC"
            results.append(doc)
    total = time.perf_counter() - t0
    if only and (ROOT / "BENCHMARKS.md").exists():
        splice_markdown(results, failures)
    else:
        write_markdown(results, failures, started, total)
    print(f"\nBENCHMARKS.md written ({total:.0f} s)", flush=True)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        sys.exit(1)


def write_markdown(
    results: list[dict[str, Any]], failures: list[str], started: dt.datetime, total: float
) -> None:
    lines = [
        "# Benchmarks",
        "",
        "Figures printed by `bench/` and collected by `bench/run_all.py`; they are "
        "measurements, not tests. `make bench` rewrites this file; `bench/run_all.py NAME` "
        "replaces the sections of the benchmarks named. Each section gives the script, the "
        "load average before it ran and the command; query plans and profiles are in "
        "`bench/results/`, linked from their section.",
        "",
        f"- Date: {started:%Y-%m-%d %H:%M} UTC (whole run {total:.0f} s)",
        f"- Command: `{COMMAND}`",
        f"- Invoked as: `{shlex.join([sys.executable, *sys.argv])}`",
        "- Database: `approvals_bench` on the local PostgreSQL (created and migrated by "
        "run_all.py; the test database is never touched)",
        "- Load generators, on the same machine as gunicorn and PostgreSQL: saturated runs "
        "are wrk (`bench/wrk/api.lua`, keep-alive connections); fixed-rate runs are Python "
        "threads (`http.client`), open loop, counting latency from each request's intended "
        "send time (no coordinated omission).",
        f"- Load average (1/5/15 min) at the end: {load_average()}. The machine is shared: "
        "figures taken while other processes were busy are lower than the hardware allows.",
        "",
        "## Machine",
        "",
        md_table(["", ""], machine()),  # type: ignore[arg-type]
        "",
    ]
    if failures:
        lines += ["## Failed", "", *[f"- {f}" for f in failures], ""]
    for doc in results:
        lines += _section(doc, level=2)
    (ROOT / "BENCHMARKS.md").write_text("\n".join(lines).rstrip() + "\n")


def splice_markdown(results: list[dict[str, Any]], failures: list[str]) -> None:
    """Replace (or add) the sections of the benchmarks that ran; keep every other one."""
    path = ROOT / "BENCHMARKS.md"
    sections: list[list[str]] = [[]]
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            sections.append([])
        sections[-1].append(line)
    for doc in results:
        new = _section(doc, level=2)
        marker = f"_`bench/{doc['name']}.py`"
        at = next(
            (i for i, sec in enumerate(sections) if any(x.startswith(marker) for x in sec)), None
        )
        if at is not None:
            sections[at] = new
        else:
            sections.append(new)
    if failures:
        print("not written into BENCHMARKS.md: " + "; ".join(failures), file=sys.stderr)
    text = "\n".join(line for sec in sections for line in sec)
    path.write_text(text.rstrip() + "\n")


def _raw_kind(block: str) -> str | None:
    """The kind of raw output a Markdown block holds ("EXPLAIN" or "cProfile", named on
    its first line), or None for a block that belongs in BENCHMARKS.md."""
    first = block.split("\n", 1)[0]
    return next((kind for kind in RAW_DIRS if kind in first), None)


def _raw_file(doc: dict[str, Any], kind: str, blocks: list[str]) -> Path:
    """Write ``doc``'s raw output of ``kind`` to its file; return the file's path."""
    path = RAW_DIRS[kind] / f"{doc['name']}.txt"
    header = (
        f"{doc['title']}: {kind} output of bench/{doc['name']}.py"
        + (f", run {doc['started']}" if doc.get("started") else "")
        + f"; load average before: {doc['load_before']}"
    )
    (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
    (ROOT / path).write_text("\n\n".join([header, *blocks]).rstrip() + "\n")
    return path


def _section(doc: dict[str, Any], *, level: int) -> list[str]:
    h = "#" * level
    out = [
        f"{h} {doc['title']}",
        "",
        f"_`bench/{doc['name']}.py`, "
        f"{doc['seconds']:.0f} s; load average before: {doc['load_before']}"
        + (f"; run {doc['started']}" if doc.get("started") else "")
        + "_",
        "",
    ]
    for t in doc["tables"]:
        out += [f"**{t['title']}**", "", md_table(t["columns"], t["rows"]), ""]
    if doc["notes"]:
        out += [f"- {n}" for n in doc["notes"]] + [""]
    blocks = [b for b in doc["markdown"] if _raw_kind(b) is None]
    for kind, what in (("EXPLAIN", "Query plans"), ("cProfile", "The profile")):
        raw = [b for b in doc["markdown"] if _raw_kind(b) == kind]
        if raw:
            path = _raw_file(doc, kind, raw).as_posix()
            out += [f"{what} of this run: [{path}]({path}).", ""]
    for block in blocks:
        out += [block, ""]
    if not any(b.startswith("Command:") for b in blocks):
        out += [f"Command: `.venv/bin/python bench/run_all.py {doc['name']}` (this section).", ""]
    return out


if __name__ == "__main__":
    main()
