"""What each of the command path's PostgreSQL-side extras costs a start and a decision.

    .venv/bin/python bench/write_path.py [--n 300] [--variants base,no_fts,...]

For each variant a scratch copy of the bench database is made (``CREATE DATABASE ...
TEMPLATE``), one thing is taken out of it (an index, a trigger set, the events'
partitioning) or one storage parameter set, and the same ``--n`` starts, manager and
finance decisions run in one child process on one connection. The figures are CPU
milliseconds per operation of the PostgreSQL backend (its /proc ticks) and of the app
(``time.process_time``), which a loaded machine moves far less than wall-clock rates;
the difference from ``base`` is the cost of what the variant took out. The scratch
databases are dropped afterwards.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, VENV_BIN, Report, expense_data  # noqa: E402
from cpu_per_op import backend_cpu_seconds  # noqa: E402

EVENTS = "approvals_workflowevent"
# The tables a start or a decision writes.
WRITTEN = (
    EVENTS,
    "approvals_workflow",
    "approvals_pendingtask",
    "approvals_timer",
    "approvals_workflowparticipant",
    "approvals_stepvisit",
    "notifications_mailmessage",
)

_NO_ROLLUP = [
    "DROP TRIGGER stepvisit_retract_update ON approvals_stepvisit",
    "DROP TRIGGER stepvisit_retract_delete ON approvals_stepvisit",
    "DROP INDEX visit_uncounted",
]


def _statement_triggers() -> list[str]:
    """The rollup as it was kept before migration 0150: the trigger functions as
    migration 0038 wrote them (read from the file, not imported) and 0033's statement
    triggers on the step visits."""
    tree = ast.parse((ROOT / "approvals/migrations/0038_write_path.py").read_text())
    functions = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(t, "id", "") == "TRIGGER_FUNCTIONS" for t in node.targets)
    )
    on = "AFTER {} ON approvals_stepvisit REFERENCING {} FOR EACH STATEMENT"
    return [
        *_NO_ROLLUP,
        *functions,
        f"CREATE TRIGGER stepday_insert {on.format('INSERT', 'NEW TABLE AS new_rows')}"
        " EXECUTE FUNCTION approvals_stepday_insert()",
        f"CREATE TRIGGER stepday_update"
        f" {on.format('UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows')}"
        " EXECUTE FUNCTION approvals_stepday_update()",
        f"CREATE TRIGGER stepday_delete {on.format('DELETE', 'OLD TABLE AS old_rows')}"
        " EXECUTE FUNCTION approvals_stepday_delete()",
    ]


# variant: (what it is, the SQL applied to the scratch copy)
VARIANTS: dict[str, tuple[str, list[str]]] = {
    "base": ("as migrated", []),
    "no_fts": (
        "without the workflows' full-text GIN (0026, 0040)",
        ["DROP INDEX workflow_search_words"],
    ),
    "no_task_sorts": (
        "without the pending tasks' four sort indexes (0032)",
        [
            "DROP INDEX task_inbox_amount",
            "DROP INDEX task_inbox_kind",
            "DROP INDEX task_inbox_requester",
            "DROP INDEX task_inbox_waiting",
        ],
    ),
    "no_rollup": (
        "without what the rollup asks of a command: the visits' retraction triggers and"
        " their index of uncounted visits (0150)",
        _NO_ROLLUP,
    ),
    "rollup_triggers": (
        "the rollup upserted by statement triggers in the command, as before 0150",
        _statement_triggers(),
    ),
    "no_visit_indexes": (
        "without the step visits' three read indexes (0028)",
        ["DROP INDEX visit_open", "DROP INDEX visit_period", "DROP INDEX visit_tenant_period"],
    ),
    "no_inbox_version": (
        "without the inbox-version triggers (0034)",
        [
            f"DROP TRIGGER approvals_inbox_task_{e} ON approvals_pendingtask"
            for e in ("insert", "update", "delete", "flush")
        ]
        + ["DROP TRIGGER approvals_inbox_workflow_words ON approvals_workflow"],
    ),
    "unpartitioned": (
        "events in one plain table (0029 undone)",
        [
            f"ALTER TABLE {EVENTS} RENAME TO {EVENTS}_parted",
            f"CREATE TABLE {EVENTS} (LIKE {EVENTS}_parted INCLUDING ALL)",
            f"INSERT INTO {EVENTS} OVERRIDING SYSTEM VALUE SELECT * FROM {EVENTS}_parted",
            f"DROP TABLE {EVENTS}_parted",
            f"SELECT setval(pg_get_serial_sequence('{EVENTS}', 'id'), "
            f"(SELECT max(id) FROM {EVENTS}))",
        ],
    ),
    "no_rls": (
        "row-level security off on every table (set_config still runs)",
        [
            "DO $$ DECLARE r record; BEGIN FOR r IN SELECT oid::regclass AS t FROM pg_class"
            " WHERE relrowsecurity LOOP EXECUTE format("
            "'ALTER TABLE %s NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY', r.t);"
            " END LOOP; END $$"
        ],
    ),
    "no_fks": (
        "without the foreign keys of the tables a command writes",
        [
            "DO $$ DECLARE r record; BEGIN FOR r IN SELECT conrelid::regclass AS t, conname"
            " FROM pg_constraint WHERE contype = 'f' AND conparentid = 0 AND conrelid::regclass"
            "::text IN (" + ", ".join(f"'{t}'" for t in WRITTEN) + ") LOOP EXECUTE format("
            "'ALTER TABLE %s DROP CONSTRAINT %I', r.t, r.conname); END LOOP; END $$"
        ],
    ),
    "no_secondary_indexes": (
        "without any index of the written tables but primary and unique keys",
        [
            "DO $$ DECLARE r record; BEGIN FOR r IN SELECT i.indexrelid::regclass AS x"
            " FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE NOT i.indisunique"
            " AND c.relname IN (" + ", ".join(f"'{t}'" for t in WRITTEN) + ")"
            " AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)"
            " LOOP EXECUTE format('DROP INDEX %s', r.x); END LOOP; END $$"
        ],
    ),
    "no_append_only": (
        "without the events' append-only triggers",
        [
            "DO $$ DECLARE r record; BEGIN FOR r IN SELECT tgname FROM pg_trigger WHERE"
            f" tgrelid = '{EVENTS}'::regclass AND NOT tgisinternal AND tgparentid = 0 LOOP"
            f" EXECUTE format('DROP TRIGGER %I ON {EVENTS}', r.tgname); END LOOP; END $$"
        ],
    ),
    "fillfactor": (
        "workflows at fillfactor 70 (room for HOT updates)",
        ["ALTER TABLE approvals_workflow SET (fillfactor = 70)", "VACUUM FULL approvals_workflow"],
    ),
}


def _admin_url(url: str) -> str:
    return urllib.parse.urlunsplit(urllib.parse.urlsplit(url)._replace(path="/postgres"))


def _scratch(url: str, variant: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path=f"{parts.path}_wp_{variant}"))


def _make(url: str, scratch: str, sql: list[str]) -> None:
    import psycopg

    source = urllib.parse.urlsplit(url).path.lstrip("/")
    name = urllib.parse.urlsplit(scratch).path.lstrip("/")
    with psycopg.connect(_admin_url(url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
    with psycopg.connect(scratch, autocommit=True) as conn:
        for statement in sql:
            conn.execute(statement)
        conn.execute("VACUUM ANALYZE")


def _drop(url: str, scratch: str) -> None:
    import psycopg

    name = urllib.parse.urlsplit(scratch).path.lstrip("/")
    with psycopg.connect(_admin_url(url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def child(n: int, fold: bool = False) -> dict[str, Any]:
    """In the scratch database: ``n`` starts, manager and finance decisions; with
    ``fold``, the analytics fold run (untimed) before each phase, as the periodic job
    would between a visit's opening and its closing, and its own CPU per row folded."""
    from _common import seed, setup_django

    setup_django()
    from django.db import connection

    from approvals.services.workflows import workflow_decide, workflow_start

    users = seed()
    alice, bob, fiona = users["alice"], users["bob"], users["fiona"]
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = int(cur.fetchone()[0])
    run = uuid.uuid4().hex[:8]
    ids: list[Any] = []

    def start(i: int) -> None:
        ids.append(
            workflow_start(
                submitter=alice,
                template_key="expense-approval",
                subject_type="bench-write-path",
                subject_id=f"{run}-{i}",
                data=expense_data(i),
            ).workflow_id
        )

    def decide(user: Any) -> Any:
        def one(i: int) -> None:
            workflow_decide(
                user=user, workflow_id=ids[i], decision="approve", request_id=uuid.uuid4().hex
            )

        return one

    def updates() -> tuple[int, int]:
        """The workflows' updates and HOT updates so far (this backend's counts sent
        first: PostgreSQL sends them at most once a second otherwise)."""
        with connection.cursor() as cur:
            cur.execute("SELECT pg_stat_force_next_flush()")
        with connection.cursor() as cur:
            cur.execute(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables "
                "WHERE relname = 'approvals_workflow'"
            )
            upd, hot = cur.fetchone()
        return int(upd), int(hot)

    # The rollup's trigger functions' own time (old and new), timed by PostgreSQL: an
    # attribution that the machine's load moves less than the backend's CPU ticks.
    with connection.cursor() as cur:
        cur.execute("SET track_functions = 'pl'")

    def trigger_ms() -> float:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_stat_force_next_flush()")
        with connection.cursor() as cur:
            cur.execute(
                "SELECT coalesce(sum(total_time), 0) FROM pg_stat_user_functions WHERE"
                " funcname IN ('approvals_stepday_insert', 'approvals_stepday_update',"
                " 'approvals_stepday_delete', 'approvals_visit_retract')"
            )
            return float(cur.fetchone()[0])

    warm = 20
    for i in range(warm):
        start(i)
        decide(bob)(i)
        decide(fiona)(i)
    del ids[:]
    from approvals.runtime.rollup import rollup_fold

    out: dict[str, Any] = {}
    folded, fold_cpu = 0, 0.0
    for phase, op in (("start", start), ("manager", decide(bob)), ("finance", decide(fiona))):
        if fold:
            cpu0 = backend_cpu_seconds(pid)
            folded += rollup_fold()
            fold_cpu += backend_cpu_seconds(pid) - cpu0
        upd0, hot0 = updates()
        trig0 = trigger_ms()
        app0, pg0, wall0 = time.process_time(), backend_cpu_seconds(pid), time.perf_counter()
        for i in range(n):
            op(i)
        out[phase] = {
            "app_ms": (time.process_time() - app0) * 1000 / n,
            "pg_ms": (backend_cpu_seconds(pid) - pg0) * 1000 / n,
            "wall_ms": (time.perf_counter() - wall0) * 1000 / n,
        }
        out[phase]["trigger_ms"] = (trigger_ms() - trig0) / n
        upd1, hot1 = updates()
        out[phase]["hot_share"] = (hot1 - hot0) / max(upd1 - upd0, 1)
    upd, hot = updates()
    out["hot_share"] = hot / max(upd, 1)
    if fold:
        out["fold"] = {"rows": folded, "pg_ms_per_row": fold_cpu * 1000 / max(folded, 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument(
        "--fold",
        action="store_true",
        help="run the analytics fold before each phase (untimed): the decisions then close"
        " counted visits, as they mostly do in production",
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.n, args.fold)))
        return

    from _common import ensure_bench_db, server_env

    url = ensure_bench_db()
    subprocess.run(  # the demo organisation in the source, once, so every copy has it
        [str(VENV_BIN / "python"), "-c", "import _common as c; c.setup_django(); c.seed()"],
        cwd=ROOT / "bench",
        env=server_env(),
        check=True,
    )
    rows = []
    folds: list[str] = []
    base: dict[str, Any] | None = None
    for variant in args.variants.split(","):
        what, sql = VARIANTS[variant]
        scratch = _scratch(url, variant)
        _make(url, scratch, sql)
        try:
            env = server_env(DATABASE_URL=scratch, BENCH_DATABASE_URL=scratch)
            done = subprocess.run(
                [str(VENV_BIN / "python"), __file__, "--child", "--n", str(args.n)]
                + (["--fold"] if args.fold else []),
                cwd=ROOT,
                env=env,
                check=True,
                stdout=subprocess.PIPE,
                text=True,
            )
        finally:
            _drop(url, scratch)
        got = json.loads(done.stdout.strip().splitlines()[-1])
        base = base or got
        row: list[Any] = [variant, what]
        for phase in ("start", "manager", "finance"):
            row += [got[phase]["pg_ms"], got[phase]["pg_ms"] - base[phase]["pg_ms"]]
        row += [
            " / ".join(f"{got[p]['trigger_ms']:.3f}" for p in ("start", "manager", "finance")),
            got["manager"]["app_ms"],
            f"{got['manager']['hot_share']:.0%} / {got['finance']['hot_share']:.0%}",
        ]
        rows.append(row)
        if "fold" in got:
            folds.append(
                f"{variant}: {got['fold']['rows']} rows folded at"
                f" {got['fold']['pg_ms_per_row']:.3f} ms each"
            )
        print(variant, json.dumps(got), flush=True)

    report = Report("write_path", "What the write path's extras cost PostgreSQL")
    report.table(
        f"PostgreSQL backend CPU ms per operation, {args.n} of each, one connection "
        "(difference from base in the next column)",
        [
            "variant",
            "what",
            "start",
            "Δ",
            "manager",
            "Δ",
            "finance",
            "Δ",
            "rollup trigger functions ms (start / manager / finance)",
            "app ms (manager)",
            "HOT updates of workflows (manager / finance)",
        ],
        rows,
    )
    report.note(
        "A decision's workflow UPDATE is HOT when no indexed column changes and the page"
        " has room; the room comes back when PostgreSQL prunes the page's dead versions,"
        " which it cannot do past the oldest snapshot of any transaction on the server"
        " (other databases included): on a shared server, the figure depends on what else"
        " runs. A finance approval completes the workflow: its status changes, never HOT."
    )
    if folds:
        report.note(
            "With --fold the analytics fold ran (untimed) before each phase, so every"
            " decision closed a counted visit; the fold's own PostgreSQL CPU per visit or"
            " retraction folded: " + "; ".join(folds) + "."
        )
    report.write()


if __name__ == "__main__":
    main()
