"""Where a decision's time goes: N approvals in-process through
``approvals.services.workflows.workflow_decide`` under cProfile.

    .venv/bin/python bench/profile_decisions.py [--decisions 2000]

The workflows are started first (not profiled); a plain timed run and the profiled
run then each approve their own workflows.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, expense_data, setup_django, summarize_ms  # noqa: E402

SUBJECT_TYPE = "bench-profile"
TOP = 30


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decisions", type=int, default=2000)
    ap.add_argument("--timed", type=int, default=500, help="decisions timed without profiler")
    args = ap.parse_args()

    setup_django()
    from _common import seed
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from approvals.models import PendingTask
    from approvals.services.workflows import workflow_decide, workflow_start

    org = seed()
    alice, bob = org["alice"], org["bob"]
    report = Report("profile_decisions", "Where the time goes: decisions in-process")

    def pending() -> list[str]:
        return [
            str(w)
            for w in PendingTask.objects.filter(
                assignee=bob, step="manager", workflow__subject_type=SUBJECT_TYPE
            )
            .order_by("id")
            .values_list("workflow_id", flat=True)
        ]

    need = args.decisions + args.timed
    have = pending()
    t = time.perf_counter()
    run = uuid.uuid4().hex[:8]
    for i in range(max(0, need - len(have))):
        workflow_start(
            submitter=alice,
            template_key="expense-approval",
            subject_type=SUBJECT_TYPE,
            subject_id=f"{run}-{i}",
            data=expense_data(i),
        )
    created = max(0, need - len(have))
    start_s = time.perf_counter() - t
    ids = pending()[:need]
    timed_ids, profiled_ids = ids[: args.timed], ids[args.timed :]

    def decide(workflow_id: str) -> None:
        workflow_decide(
            user=bob, workflow_id=workflow_id, decision="approve", request_id=uuid.uuid4().hex
        )

    # Plain timing and query count, no profiler.
    lat = []
    with CaptureQueriesContext(connection) as queries:
        t0 = time.perf_counter()
        for w in timed_ids:
            t = time.perf_counter()
            decide(w)
            lat.append(time.perf_counter() - t)
        timed_s = time.perf_counter() - t0
    s = summarize_ms(lat)
    db_ms = sum(float(q["time"]) for q in queries.captured_queries) * 1000 / len(timed_ids)

    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    for w in profiled_ids:
        decide(w)
    profiler.disable()
    prof_s = time.perf_counter() - t0

    report.table(
        "Decisions in-process (one thread, no HTTP)",
        ["measure", "value"],
        [
            ["decisions timed (no profiler)", len(timed_ids)],
            ["decisions/s", len(timed_ids) / timed_s],
            ["ms/decision p50", s["p50"]],
            ["ms/decision p95", s["p95"]],
            [
                "SQL statements per decision (incl. BEGIN/COMMIT)",
                len(queries.captured_queries) / len(timed_ids),
            ],
            ["time in SQL per decision, ms (client-side)", db_ms],
            ["decisions under cProfile", len(profiled_ids)],
            ["ms/decision under cProfile", prof_s * 1000 / max(1, len(profiled_ids))],
            [
                f"starts to set up ({created} made now), starts/s",
                created / start_s if created else float("nan"),
            ],
        ],
    )
    out = io.StringIO()
    raw = pstats.Stats(profiler)
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs().sort_stats("cumulative").print_stats(TOP)
    text = out.getvalue()
    body = text[text.index("   ncalls") :] if "   ncalls" in text else text
    print(body)
    report.markdown.append(
        f"Top {TOP} entries by cumulative time, {len(profiled_ids):,} approvals through "
        "`workflow_decide` (cProfile, `strip_dirs`):\n\n```\n" + body.rstrip() + "\n```"
    )

    # The same profile grouped by layer, by internal (self) time.
    groups: dict[str, float] = {}
    total = 0.0
    for (filename, _line, _fn), (_cc, _nc, tt, _ct, _callers) in raw.stats.items():  # type: ignore[attr-defined]
        total += tt
        key = _layer(filename)
        groups[key] = groups.get(key, 0.0) + tt
    rows = [
        [k, v * 1000 / max(1, len(profiled_ids)), 100 * v / total]
        for k, v in sorted(groups.items(), key=lambda kv: -kv[1])
    ]
    report.table(
        "Self time by layer (under cProfile)", ["layer", "ms/decision", "% of total"], rows
    )
    _profile_http(report, bob, alice, args.timed)
    report.write()


def _profile_http(report: Report, bob: Any, alice: Any, n: int) -> None:
    """One HTTP decision through the whole Django stack (middleware, DRF, the bearer
    token, the serializers, the command path, the after-commit hand-over), in-process
    with Django's test client so only the socket is left out, profiled by layer."""
    from _common import api_token
    from django.test import Client

    from approvals.services.workflows import workflow_start

    run = uuid.uuid4().hex[:8]
    ids = [
        workflow_start(
            submitter=alice,
            template_key="expense-approval",
            subject_type=SUBJECT_TYPE,
            subject_id=f"{run}-http-{i}",
            data=expense_data(i),
        ).workflow_id
        for i in range(n + 20)
    ]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {api_token(bob)}", HTTP_HOST="127.0.0.1")

    def post(workflow_id: Any) -> None:
        r = client.post(
            f"/api/workflows/{workflow_id}/decisions",
            {"decision": "approve", "requestId": uuid.uuid4().hex},
            content_type="application/json",
        )
        assert r.status_code == 200, r.content

    for w in ids[:20]:
        post(w)  # warm: caches, the token's last use
    profiler = cProfile.Profile()
    profiler.enable()
    for w in ids[20:]:
        post(w)
    profiler.disable()
    groups: dict[str, float] = {}
    total = 0.0
    for (filename, _line, _fn), (_cc, _nc, tt, _ct, _callers) in pstats.Stats(  # type: ignore[attr-defined]
        profiler
    ).stats.items():
        total += tt
        key = _http_layer(filename)
        groups[key] = groups.get(key, 0.0) + tt
    report.table(
        f"One HTTP decision by layer: {n:,} POST /api/workflows/{{id}}/decisions through the"
        " Django stack (test client, no socket), self time under cProfile",
        ["layer", "ms/decision", "% of total"],
        [
            [k, v * 1000 / n, 100 * v / total]
            for k, v in sorted(groups.items(), key=lambda kv: -kv[1])
        ],
    )


def _http_layer(filename: str) -> str:
    f = filename.replace("\\", "/")
    for needle, name in [
        ("/approvals/runtime/", "command path (approvals/runtime)"),
        ("/approvals/notifications/", "mail projection (facts written in the transaction)"),
        ("/django/template/", "Django template engine"),
        ("/approvals/api/", "API views and serializers (approvals/api)"),
        ("/rest_framework/", "Django REST framework"),
        ("/drf_spectacular/", "Django REST framework"),
        ("/kombu/", "after-commit hand-over to the broker (Celery, kombu, redis-py)"),
        ("/celery/", "after-commit hand-over to the broker (Celery, kombu, redis-py)"),
        ("/redis/", "after-commit hand-over to the broker (Celery, kombu, redis-py)"),
        ("/django/middleware/", "Django middleware"),
        ("/csp/", "Django middleware"),
        ("/django/core/handlers/", "Django request handling"),
        ("/django/test/", "test client (stands in for gunicorn)"),
    ]:
        if needle in f:
            return name
    return _layer(filename)


def _layer(filename: str) -> str:
    f = filename.replace("\\", "/")
    for needle, name in [
        ("/celpy/", "CEL evaluation (celpy)"),
        ("/lark/", "CEL evaluation (lark tree walk)"),
        ("/templates_engine/", "engine (decide/evolve/snapshot)"),
        ("/psycopg/", "psycopg (driver, incl. waiting on PostgreSQL)"),
        ("/django/db/", "Django ORM / SQL compiler"),
        ("/django_fsm", "django-fsm"),
        ("/django/", "Django (other)"),
        ("/approvals/", "approvals app"),
        ("/json/", "json"),
    ]:
        if needle in f:
            return name
    if f.startswith("~") or "<built-in" in f or f.startswith("<"):
        return "builtins (incl. socket I/O)"
    return "other stdlib / libraries"


if __name__ == "__main__":
    main()
