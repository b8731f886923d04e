"""Index entries written per start and per decision, by table.

    .venv/bin/python bench/index_entries.py [--n 100]

Runs ``--n`` starts, then as many manager decisions (with a request id), on the bench
database, and counts what they wrote: per table the rows inserted and the updates that
were not HOT (``pg_stat_user_tables``), each an entry in every index of the table whose
predicate the row meets. The events are only inserted: each partial index's predicate is
evaluated on the run's events. For the other tables a partial index is counted for every
row (an upper bound: the mails' ``mail_digest_due`` holds none of a non-digest person's,
a visit closed leaves ``visit_open``). The GIN index of the workflows' words is counted
as one.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import expense_data, setup_django  # noqa: E402

SUBJECT_TYPE = "bench-index-entries"
TABLES = (
    "approvals_workflow",
    "approvals_workflowevent",
    "approvals_pendingtask",
    "approvals_stepvisit",
    "approvals_workflowparticipant",
    "approvals_timer",
    "notifications_mailmessage",
)
EVENTS = "approvals_workflowevent"


def writes(cur: Any) -> dict[str, tuple[int, int]]:
    """Per table: (rows inserted, updates not HOT) so far."""
    cur.execute("SELECT pg_stat_force_next_flush()")
    cur.execute("SELECT pg_stat_clear_snapshot()")
    cur.execute(
        "SELECT relname, n_tup_ins, n_tup_upd - n_tup_hot_upd FROM pg_stat_user_tables"
        " WHERE relname = ANY(%s)",
        [list(TABLES)],
    )
    got = {name: (int(ins), int(upd)) for name, ins, upd in cur.fetchall()}
    # the events' rows are counted on their partitions
    cur.execute(
        "SELECT coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables s"
        " JOIN pg_inherits h ON h.inhrelid = s.relid WHERE h.inhparent = %s::regclass",
        [EVENTS],
    )
    got[EVENTS] = (int(cur.fetchone()[0]), 0)
    return got


def indexes(cur: Any, table: str) -> list[tuple[str, str | None]]:
    cur.execute(
        "SELECT indexrelid::regclass::text, pg_get_expr(indpred, indrelid) FROM pg_index"
        " WHERE indrelid = %s::regclass",
        [table],
    )
    return list(cur.fetchall())


def event_entries(cur: Any, run: str) -> tuple[int, dict[str, int]]:
    """The run's events' entries per index of the events."""
    where = "workflow_id IN (SELECT id FROM approvals_workflow WHERE subject_id LIKE %s)"
    cur.execute(f"SELECT count(*) FROM {EVENTS} WHERE {where}", [f"{run}-%"])  # noqa: S608
    rows = int(cur.fetchone()[0])
    out = {}
    for name, predicate in indexes(cur, EVENTS):
        cur.execute(
            f"SELECT count(*) FROM {EVENTS} WHERE {where} AND ({predicate or 'true'})",  # noqa: S608
            [f"{run}-%"],
        )
        out[name] = int(cur.fetchone()[0])
    return rows, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100)
    n = ap.parse_args().n

    setup_django()
    from _common import delete_workflows, seed
    from django.db import connection, transaction

    from approvals.models import User
    from approvals.services.workflows import workflow_decide, workflow_start

    seed()
    with transaction.atomic(), connection.cursor() as cur:
        delete_workflows(cur, SUBJECT_TYPE)
    alice, bob = (User.objects.get(username=u) for u in ("alice", "bob"))
    run = uuid.uuid4().hex[:8]
    with connection.cursor() as cur:
        before = writes(cur)
        ids = [
            workflow_start(
                submitter=alice,
                template_key="expense-approval",
                subject_type=SUBJECT_TYPE,
                subject_id=f"{run}-{i}",
                data=expense_data(i),
            ).workflow_id
            for i in range(n)
        ]
        started = writes(cur)
        s_events = event_entries(cur, run)
        # the decisions' events: those of the workflows decided, less the starts'
        for wid in ids:
            workflow_decide(
                user=bob, workflow_id=wid, decision="approve", request_id=uuid.uuid4().hex
            )
        decided = writes(cur)
        d_events = event_entries(cur, run)
        counts = {t: len(indexes(cur, t)) for t in TABLES}

    def per(a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], t: str) -> float:
        (i0, u0), (i1, u1) = a[t], b[t]
        return (i1 - i0 + u1 - u0) * counts[t] / n

    print(f"{'table':32} {'rows/start':>10} {'entries':>8} {'rows/decision':>14} {'entries':>8}")
    totals = [0.0, 0.0]
    for t in TABLES:
        if t == EVENTS:
            s_rows, s_idx = s_events[0] / n, sum(s_events[1].values()) / n
            d_rows = (d_events[0] - s_events[0]) / n
            d_idx = (sum(d_events[1].values()) - sum(s_events[1].values())) / n
        else:
            s_rows = sum(started[t]) - sum(before[t])
            d_rows = sum(decided[t]) - sum(started[t])
            s_rows, d_rows = s_rows / n, d_rows / n
            s_idx, d_idx = per(before, started, t), per(started, decided, t)
        totals[0] += s_idx
        totals[1] += d_idx
        print(f"{t:32} {s_rows:10.2f} {s_idx:8.2f} {d_rows:14.2f} {d_idx:8.2f}")
    print(f"{'all':32} {'':10} {totals[0]:8.2f} {'':14} {totals[1]:8.2f}")
    for label, (_, by_index) in (("start", s_events), ("start + decision", d_events)):
        print(label, "events per index:", {k: round(v / n, 2) for k, v in by_index.items()})


if __name__ == "__main__":
    main()
