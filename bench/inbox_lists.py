"""The inbox page sorted, filtered and searched: 10,000 open tasks for bob among
1,000,000 in the table (the fill of bench/inbox.py, shared with it).

    .venv/bin/python bench/inbox_lists.py [--iterations N]

Each variant of the page (GET / with its query parameters) is rendered in-process as
bob with a session, like the page row of bench/inbox.py: p50/p95/p99, the app's CPU per
page (time.process_time of this process: Django, the template, the driver; what load on
the machine moves least) and the SQL queries per page. For the filters to have something
to find, 1,000 of bob's tasks are marked held for someone else and 2,000 made overdue
inside a transaction that is rolled back at the end (the shared fill is left as it
was). The plans of the sorted queries are printed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import inbox as filled_inbox  # noqa: E402
from _common import Report, seed, setup_django, summarize_ms, verdict  # noqa: E402

P95_TARGET = 50.0
VARIANTS = [
    ("due date (default), first page", "/"),
    ("amount, largest first", "/?sort=amount"),
    ("waiting longest first", "/?sort=waiting"),
    ("requester, A to Z", "/?sort=requester"),
    ("kind + overdue, by amount", "/?kind=expense-approval&overdue=1&sort=amount"),
    ("held for someone else, by due date", "/?behalf=1"),
    ("search a reference (q=7777)", "/?q=7777"),
    ("search a requester (q=alice), by amount", "/?q=alice&sort=amount"),
    ("amount, page 100 (offset 2,475)", "/?sort=amount&page=100"),
]
# the variants whose list query's plan is printed
PLANNED = ("/?sort=amount", "/?sort=requester", "/?q=alice&sort=amount", "/?q=7777")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=40)
    args = ap.parse_args()

    setup_django()
    from django.db import connection, transaction
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from approvals.models import PendingTask

    org = seed()
    bob = org["bob"]
    tenant_id = org["tenant"].pk
    report = Report("inbox_lists", "Inbox page: sort, filter and search at 10,000 tasks")
    fill_note = filled_inbox.ensure_filled(org)
    with connection.cursor() as cur:
        # VACUUM as autovacuum would have after the fill: the counts are index-only scans
        # of (tenant, assignee, ...) once the table's pages are marked all-visible.
        cur.execute("VACUUM ANALYZE approvals_user, approvals_workflow, approvals_pendingtask")
        cur.execute("SELECT count(*) FROM approvals_pendingtask")
        total = cur.fetchone()[0]
    report.note(f"fill (bench/inbox.py's): {fill_note}")

    browser = Client(HTTP_HOST="127.0.0.1")
    browser.force_login(bob)
    rows = []
    plans = []
    with transaction.atomic():
        mine = PendingTask.objects.filter(tenant_id=tenant_id, assignee=bob)
        bob_total = mine.count()
        ids = list(mine.order_by("id").values_list("id", flat=True))
        with connection.cursor() as cur:
            cur.execute(
                "UPDATE approvals_pendingtask SET on_behalf_of = 'victor' WHERE id = ANY(%s)",
                [ids[::10]],
            )
            cur.execute(
                "UPDATE approvals_pendingtask SET due_at = now() - interval '1 day'"
                " WHERE id = ANY(%s)",
                [ids[3::5]],
            )
            cur.execute("ANALYZE approvals_pendingtask")
        # the counts the fill's triggers skipped, and the marks above (committed nowhere:
        # the page reads the counters with this transaction's changes)
        with connection.cursor() as cur:
            cur.execute("SELECT approvals_inbox_recount()")
        for label, path in VARIANTS:
            response = browser.get(path)  # warm
            assert response.status_code == 200, (path, response.status_code)
            with CaptureQueriesContext(connection) as q:
                browser.get(path)
            # kept now: each request the test client makes clears the connection's log
            captured = list(q.captured_queries)
            queries = len(captured)
            lat, cpu = [], []
            for _ in range(args.iterations):
                t, c = time.perf_counter(), time.process_time()
                response = browser.get(path)
                lat.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            s = summarize_ms(lat)
            rows.append(
                [
                    f"GET {path} ({label})",
                    s["n"],
                    s["p50"],
                    s["p95"],
                    s["p99"],
                    summarize_ms(cpu)["p50"],
                    queries,
                    f"<= {P95_TARGET:.0f} ms",
                    verdict(s["p95"] <= P95_TARGET),
                ]
            )
            # the page's list query: the page's ids in the sort's order, then its count
            listing = [
                x["sql"]
                for x in captured
                if "approvals_pendingtask" in x["sql"]
                and "ORDER BY" in x["sql"]
                and "LIMIT" in x["sql"]
                and '"approvals_pendingtask"."id" IN' not in x["sql"]
            ]
            counting = [
                x["sql"]
                for x in captured
                if "approvals_pendingtask" in x["sql"] and "COUNT(*)" in x["sql"]
            ]
            if listing and path in PLANNED:
                with connection.cursor() as c:
                    c.execute("EXPLAIN (ANALYZE, BUFFERS) " + listing[0])
                    plans.append((label, "\n".join(r[0] for r in c.fetchall())))
                    if counting:
                        c.execute("EXPLAIN (ANALYZE, BUFFERS) " + counting[0])
                        plans.append((label + ", its count", "\n".join(r[0] for r in c.fetchall())))
        transaction.set_rollback(True)

    load = Path("/proc/loadavg").read_text().split()[:3]
    report.note(
        "load average during the run (1/5/15 min): "
        + " ".join(load)
        + " on this machine's cores, shared with other work"
    )
    report.table(
        f"The inbox page (HTML) for bob, in-process with a session ({bob_total:,} open "
        f"tasks, 1,000 held for someone else, 2,000 overdue; {total:,} in the table)",
        [
            "page",
            "requests",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "app CPU ms (p50)",
            "SQL queries",
            "p95 target",
            "result",
        ],
        rows,
    )
    for label, plan in plans:
        print(f"\nEXPLAIN (ANALYZE, BUFFERS), {label}:\n{plan}", flush=True)
        report.markdown.append(
            f"EXPLAIN (ANALYZE, BUFFERS) of the inbox list query, {label}:\n\n```\n{plan}\n```"
        )
    report.write()


if __name__ == "__main__":
    main()
