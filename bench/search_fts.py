"""The search's words over 1,000,000 workflows: PostgreSQL full-text search over the GIN
index ``workflow_search_words`` (migrations 0026 and 0040).

    .venv/bin/python bench/search_fts.py [--reset] [--rows N]

The fill is plain SQL (generate_series) in one transaction, skipped when already there;
each row's description is built from a purpose, a place, a reason and an invoice number
("Hotel in Pune for the offsite, invoice INV-000123"), so a word is as common as it is
in life: "hotel" in one request of 20, "hotel pune" in one of 300, an invoice in one.
The index is dropped for the fill and built again after (as a restore would). Then the
search's first page (25 rows, newest first) is timed in-process through
``WorkflowSearch`` (the page's own path and columns: the words' lexemes, the names they
match, the queries), with the app's CPU per search and its SQL queries, as an auditor
(who reads all of them) and as an employee who takes part in one in 500 (the read rule,
asked from his side), and the plan of each query that reads workflows is printed.

It runs in a database of its own, ``approvals_bench_search`` (created and migrated here;
``BENCH_DATABASE_URL`` overrides it): dropping and building the index takes the table's
exclusive lock, which would stall the other benchmarks' reads of ``approvals_bench``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    Report,
    bench_database_url,
    ensure_bench_db,
    setup_django,
    summarize_ms,
    verdict,
)

SUBJECT_TYPE = "bench-search"
ROWS = 1_000_000
P95_TARGET = 100.0
INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS workflow_search_words ON approvals_workflow"
    " USING gin (search_words)"
)
PEOPLE_SQL = """
CREATE INDEX IF NOT EXISTS user_search_name ON approvals_user USING gin (
    to_tsvector('simple'::regconfig, username || ' ' || first_name || ' ' || last_name)
)
"""
NEWEST_SQL = (
    "CREATE INDEX IF NOT EXISTS workflow_newest ON approvals_workflow (tenant_id, created_at DESC)"
)
PURPOSES = [
    "Hotel", "Taxi", "Flight", "Train ticket", "Team dinner", "Client lunch", "Laptop",
    "Monitor", "Conference pass", "Software licence", "Office chairs", "Courier",
    "Internet bill", "Mobile recharge", "Books", "Training course", "Visa fee", "Parking",
    "Fuel", "Printer ink",
]  # fmt: skip
PLACES = [
    "Pune", "Mumbai", "Bengaluru", "Delhi", "Chennai", "Hyderabad", "Kolkata", "Ahmedabad",
    "Jaipur", "Kochi", "Goa", "Singapore", "London", "Berlin", "Dubai",
]  # fmt: skip
REASONS = [
    "for the offsite", "for the customer visit", "for the quarterly review",
    "for the hackathon", "for the sales kickoff", "for onboarding", "for the audit",
    "for the product launch", "for the training week", "for the partner meeting",
]  # fmt: skip
QUERIES = [
    ("one invoice (1 match)", None),
    ("hotel pune (1 in 300)", "hotel pune"),
    ("hotel (1 in 20)", "hotel"),
    ("offsite goa taxi (1 in 3,000)", "offsite goa taxi"),
]


def _array(values: list[str]) -> str:
    return "ARRAY[" + ", ".join("'" + v.replace("'", "''") + "'" for v in values) + "]"


def filled(cur: Any, rows: int) -> bool:
    cur.execute(
        "SELECT count(*) FROM approvals_workflow WHERE tenant_id = %s AND subject_type = %s",
        [TENANT_ID, SUBJECT_TYPE],
    )
    return bool(cur.fetchone()[0] >= rows)


def reset(cur: Any) -> None:
    cur.execute("DELETE FROM approvals_workflow WHERE subject_type = %s", [SUBJECT_TYPE])


def fill(cur: Any, *, rows: int, alice_id: int, template_id: int, version: int) -> None:
    cur.execute("SET LOCAL session_replication_role = replica")
    cur.execute("SET LOCAL maintenance_work_mem = '256MB'")
    cur.execute("DROP INDEX IF EXISTS workflow_search_words")
    purposes, places, reasons = _array(PURPOSES), _array(PLACES), _array(REASONS)
    cur.execute(
        f"""
        INSERT INTO approvals_workflow (id, template_key, template_version, subject_type,
            subject_id, data, status, public_status, current_step, version, snapshot,
            last_hash, created_at, updated_at, submitter_id, tenant_id, template_id,
            summary, amount_display, subject_exclusive)
        SELECT gen_random_uuid(), 'expense-approval', %(version)s, %(subject)s,
            'E-' || g, jsonb_build_object('amountPaise', 100000 + (g::bigint * 7919) %% 50000000,
                'currency', 'INR', 'department', 'dept-' || (g %% 40),
                'description', d.text),
            'RUNNING', 'PENDING_MANAGER', 'manager', 2, '{{}}'::jsonb, '',
            now() - g * interval '10 seconds', now(), %(alice)s, %(tenant)s, %(template)s,
            d.text, '', false
        FROM generate_series(1, %(n)s) g,
        LATERAL (SELECT ({purposes})[1 + abs(hashint4(g)::bigint) %% {len(PURPOSES)}] || ' in '
                     || ({places})[1 + abs(hashint4(g + 7919)::bigint) %% {len(PLACES)}] || ' '
                     || ({reasons})[1 + abs(hashint4(g + 104729)::bigint) %% {len(REASONS)}]
                     || ', invoice INV-' || lpad(g::text, 7, '0') AS text) d
        """,
        {
            "version": version,
            "subject": SUBJECT_TYPE,
            "alice": alice_id,
            "tenant": TENANT_ID,
            "template": template_id,
            "n": rows,
        },
    )
    cur.execute(INDEX_SQL)


TENANT_ID = 0
# The employee takes part in one request in TAKES_PART (as a manager deciding them would):
# 2,000 of a million, so a common word finds a full first page among them.
TAKES_PART = 500


def take_part(cur: Any, user_id: int) -> int:
    """The employee's participations in the filled rows (idempotent); their count."""
    cur.execute(
        """
        INSERT INTO approvals_workflowparticipant (tenant_id, workflow_id, user_id)
        SELECT tenant_id, id, %(user)s FROM approvals_workflow
        WHERE tenant_id = %(tenant)s AND subject_type = %(subject)s
          AND abs(hashtext(subject_id)) %% %(every)s = 0
        ON CONFLICT DO NOTHING
        """,
        {"user": user_id, "tenant": TENANT_ID, "subject": SUBJECT_TYPE, "every": TAKES_PART},
    )
    cur.execute(
        "SELECT count(*) FROM approvals_workflowparticipant p JOIN approvals_workflow w"
        " ON w.id = p.workflow_id WHERE p.user_id = %s AND w.subject_type = %s",
        [user_id, SUBJECT_TYPE],
    )
    return int(cur.fetchone()[0])


def main() -> None:
    global TENANT_ID
    ap = argparse.ArgumentParser()
    ap.add_argument("--reset", action="store_true", help="drop the filled rows first")
    ap.add_argument("--rows", type=int, default=ROWS)
    ap.add_argument("--iterations", type=int, default=30)
    args = ap.parse_args()

    if not os.environ.get("BENCH_DATABASE_URL"):
        parts = urllib.parse.urlsplit(bench_database_url())
        own = urllib.parse.urlunsplit(parts._replace(path="/approvals_bench_search"))
        os.environ["BENCH_DATABASE_URL"] = own
    ensure_bench_db()
    setup_django()
    from _common import seed
    from django.db import connection, transaction
    from django.test import RequestFactory
    from django.test.utils import CaptureQueriesContext

    from approvals.models import WorkflowTemplate
    from approvals.runtime import tenant_scope
    from approvals.web.search import PAGE_COLUMNS, PAGE_SIZE, WorkflowSearch

    org = seed()
    TENANT_ID = org["tenant"].pk
    template = (
        WorkflowTemplate.objects.filter(tenant_id=TENANT_ID, key="expense-approval")
        .order_by("-version")
        .first()
    )
    assert template is not None
    report = Report("search_fts", f"Search: full-text over {args.rows:,} workflows")

    t = time.perf_counter()
    with connection.cursor() as cur:
        if args.reset:
            with transaction.atomic():
                reset(cur)
        if filled(cur, args.rows):
            fill_note = "already filled: skipped"
        else:
            with transaction.atomic():
                # no foreign-key trigger queued by the reset may outlive it: CREATE INDEX
                # refuses a table with pending trigger events
                cur.execute("SET LOCAL session_replication_role = replica")
                reset(cur)
                fill(
                    cur,
                    rows=args.rows,
                    alice_id=org["alice"].pk,
                    template_id=template.pk,
                    version=template.version,
                )
            fill_note = f"filled and indexed in {time.perf_counter() - t:.1f} s"
        cur.execute(INDEX_SQL)
        with transaction.atomic():
            taking_part = take_part(cur, org["bob"].pk)
        cur.execute("ANALYZE approvals_workflowparticipant")
        # migration 0026's, for a database migrated before it had them
        cur.execute(PEOPLE_SQL)
        cur.execute(NEWEST_SQL)
        cur.execute("ANALYZE approvals_workflow")
        cur.execute("SELECT count(*) FROM approvals_workflow")
        total = cur.fetchone()[0]
        cur.execute("SELECT pg_size_pretty(pg_relation_size('workflow_search_words'))")
        index_size = cur.fetchone()[0]
    report.note(f"fill: {fill_note}; {total:,} workflows in the table; index {index_size}")
    report.note(
        f"the employee (bob) takes part in {taking_part:,} of them; he holds no grant on "
        "the workflow template, so his search starts from what he takes part in "
        "(access.workflows_readable_from_own)"
    )

    factory = RequestFactory()
    rng = random.Random(7)

    def search(who: Any, text: str) -> WorkflowSearch:
        request = factory.get("/search")
        request.user = who
        found = WorkflowSearch({"text": text}, request=request)
        assert found.is_valid(), found.errors
        return found

    def words(query: str | None) -> str:
        return query or f"INV-{rng.randint(1, args.rows):07d}"

    rows = []
    plans = []
    for who in ("audrey", "bob"):
        person = org[who]
        for label, query in QUERIES:

            def first_page(person: Any = person, query: str | None = query) -> list[Any]:
                # as the page runs it: one transaction acting for the organisation
                # (TenantScopeMiddleware), under its row-level security policy
                with transaction.atomic(), tenant_scope.acting_for(TENANT_ID):
                    found = search(person, words(query))
                    return found.results(limit=PAGE_SIZE + 1, columns=PAGE_COLUMNS)

            for _ in range(5):  # warm
                first_page()
            lat, cpu, hits = [], [], 0
            for _ in range(args.iterations):
                t, c = time.perf_counter(), time.process_time()
                page = first_page()
                lat.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
                hits = len(page)
            with CaptureQueriesContext(connection) as captured:
                first_page()
            s = summarize_ms(lat)
            role = "auditor (reads all)" if who == "audrey" else "employee (takes part)"
            ok = s["p95"] <= P95_TARGET
            sqls = [q["sql"] for q in captured.captured_queries]
            rows.append(
                [
                    role,
                    label,
                    hits,
                    s["p50"],
                    s["p95"],
                    s["p99"],
                    summarize_ms(cpu)["p50"],
                    len(sqls),
                    verdict(ok),
                ]
            )
            if who == "audrey" or query == "hotel":
                # the plans of the queries that read workflows (the page, its window's
                # edge, the matches first), as the search ran them
                for sql in sqls:
                    if '"approvals_workflow"' not in sql or "approvals_workflowparticipant" in sql:
                        continue
                    with (
                        transaction.atomic(),
                        tenant_scope.acting_for(TENANT_ID),
                        connection.cursor() as c,
                    ):
                        c.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
                        plan = "\n".join(r[0] for r in c.fetchall())
                    plans.append((f"{role}, {label}", _short(sql), plan))
    report.table(
        f"First page ({PAGE_SIZE} rows, newest first) of a search, in-process, "
        f"{args.iterations} runs each; target p95 <= {P95_TARGET:.0f} ms. App CPU: "
        "time.process_time of this process (Django, the driver) per search",
        [
            "who",
            "words",
            "rows on page",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "app CPU ms (p50)",
            "SQL queries",
            "verdict",
        ],
        rows,
    )
    for label, sql, plan in plans:
        line = f"{label}: {sql}"
        print(f"\nEXPLAIN (ANALYZE, BUFFERS), {line}\n{plan}", flush=True)
        report.markdown.append(f"EXPLAIN (ANALYZE, BUFFERS), {line}:\n\n```\n{plan}\n```")
    report.write()


def _short(sql: str) -> str:
    """What a query is, in a few words, for the plan's heading."""
    if sql.startswith("WITH m"):
        return "the matches first (materialized), then their ids sorted"
    if "OFFSET" in sql and "@@" not in sql:
        return "the window's edge (the newest rows' time)"
    if "@@" in sql:
        return "the page within the newest rows (time order, the words as a filter)"
    return "the page's rows by id"


if __name__ == "__main__":
    main()
