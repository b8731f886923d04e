"""What the sealed tenant's check costs a start and a decision, switched in one connection.

    .venv/bin/python bench/tenant_check.py [--n 40] [--rounds 8] [--variants as_0140,current]

Every row-level security policy asks ``(SELECT approvals_acting_tenant())`` once per
policed table and statement. On a scratch copy of the bench database, one process and
one connection run blocks of ``--n`` starts, manager and finance decisions under each
variant in turn, ``--rounds`` times (the order reversed every other round), so a shared
machine's load swings fall on every variant alike; ``write_path.py`` compares variants
one after another, minutes apart. The figures are the PostgreSQL backend's CPU
milliseconds per operation (its /proc ticks), the mean over the rounds. ``--variants``
runs some of them only (the Δ columns need ``no_rls``); ``--function-time`` adds the
time PostgreSQL counts inside the sealed tenant's functions (``track_functions``), which
the machine's other load moves far less than the backend's CPU.

- ``as_0121``: the check (and ``approvals_act_for``) as migration 0121 wrote it (read
  from that migration's own copy);
- ``as_0140``: the check as migration 0140 left it (the seal's function called at every
  check, the key read by a query at each call), ``approvals_act_for`` as 0121 wrote it;
- ``current``: the check as approvals/sql/ has it;
- ``unchecked``: the tenant setting taken as it is, no seal checked (what any check
  costs above nothing: never a way to run);
- ``no_rls``: row-level security off on every table.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, VENV_BIN, Report, expense_data  # noqa: E402
from cpu_per_op import backend_cpu_seconds  # noqa: E402
from write_path import _drop, _make, _scratch  # noqa: E402

SQL = ROOT / "approvals" / "sql" / "functions"
MIGRATION_0121 = ROOT / "approvals" / "migrations" / "0121_tenant_sealed_and_shared_tables.py"
UNCHECKED = (
    "CREATE OR REPLACE FUNCTION public.approvals_acting_tenant() RETURNS bigint"
    " LANGUAGE plpgsql STABLE SECURITY DEFINER AS $f$ BEGIN RETURN"
    " NULLIF(pg_catalog.current_setting('approvals.tenant', true), '')::pg_catalog.int8;"
    " END $f$"
)
# The check as migration 0140 left it (two functions, the key read at every call).
AS_0140 = [
    """CREATE OR REPLACE FUNCTION public.approvals_tenant_seal(tenant pg_catalog.text)
 RETURNS pg_catalog.text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
AS $function$
DECLARE
    k pg_catalog.text;
BEGIN
    SELECT t.key INTO k FROM public.approvals_tenant_key t;
    IF k IS NULL OR tenant IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.concat_ws(':',
        k, tenant, pg_catalog.pg_backend_pid(),
        EXTRACT(epoch FROM pg_catalog.transaction_timestamp()), k), 'UTF8')), 'hex');
END $function$;
REVOKE ALL ON FUNCTION public.approvals_tenant_seal(text) FROM PUBLIC;
""",
    """CREATE OR REPLACE FUNCTION public.approvals_acting_tenant()
 RETURNS pg_catalog.int8
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
AS $function$
DECLARE
    tenant pg_catalog.text := pg_catalog.current_setting('approvals.tenant', true);
BEGIN
    IF tenant IS NULL OR tenant OPERATOR(pg_catalog.=) '' THEN
        RETURN NULL;
    END IF;
    IF (pg_catalog.current_setting('approvals.tenant_seal', true)
            OPERATOR(pg_catalog.=) public.approvals_tenant_seal(tenant)) IS NOT TRUE THEN
        RAISE EXCEPTION 'approvals.tenant was set to % without approvals_act_for'
            ' in this transaction: refused', tenant USING ERRCODE = '42501';
    END IF;
    RETURN tenant::pg_catalog.int8;
END $function$;
""",
]
VARIANTS = ("as_0121", "as_0140", "current", "unchecked", "no_rls")
PHASES = ("start", "manager", "finance")
FUNCTION_PHASES = tuple(f"{phase} in functions" for phase in PHASES)


def _as_0121() -> list[str]:
    spec = importlib.util.spec_from_file_location("m0121", MIGRATION_0121)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ran: dict[str, str] = module.RAN
    return [
        ran["functions/approvals_tenant_seal.sql"],
        ran["functions/approvals_acting_tenant.sql"],
        ran["functions/approvals_act_for.sql"],
    ]


def child(
    n: int, rounds: int, variants: tuple[str, ...], function_time: bool
) -> dict[str, dict[str, float]]:
    from _common import seed, setup_django

    setup_django()
    from django.db import connection

    from approvals.services.workflows import workflow_decide, workflow_start

    users = seed()
    alice, bob, fiona = users["alice"], users["bob"], users["fiona"]
    current = [
        (SQL / f"{name}.sql").read_text()
        for name in (
            "approvals_tenant_seal_key",
            "approvals_tenant_seal",
            "approvals_acting_tenant",
            "approvals_act_for",
        )
    ]
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = int(cur.fetchone()[0])
        cur.execute("SELECT array_agg(oid::regclass::text) FROM pg_class WHERE relrowsecurity")
        policed = cur.fetchone()[0]
        if function_time:
            cur.execute("SET track_functions = 'pl'")

    def in_functions() -> float:
        """Seconds this backend has spent in the sealed tenant's functions (their own
        time and their callees'), flushed to the statistics first."""
        if not function_time:
            return 0.0
        with connection.cursor() as cur:
            cur.execute("SELECT pg_stat_force_next_flush()")
        with connection.cursor() as cur:
            cur.execute(
                "SELECT pg_stat_clear_snapshot(), coalesce(sum(total_time), 0)"
                " FROM pg_stat_user_functions"
                " WHERE funcname IN ('approvals_acting_tenant', 'approvals_act_for')"
            )
            return float(cur.fetchone()[1]) / 1000

    def run(statements: list[str], rls: bool) -> None:
        switch = (
            "ENABLE ROW LEVEL SECURITY, FORCE" if rls else "DISABLE ROW LEVEL SECURITY, NO FORCE"
        )
        with connection.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
            for table in policed:
                cur.execute(f"ALTER TABLE {table} {switch} ROW LEVEL SECURITY")

    setups: dict[str, Callable[[], None]] = {
        "as_0121": lambda: run(_as_0121(), True),
        "as_0140": lambda: run(AS_0140 + _as_0121()[2:], True),
        "current": lambda: run(current, True),
        "unchecked": lambda: run([UNCHECKED], True),
        "no_rls": lambda: run(current, False),
    }
    tag = uuid.uuid4().hex[:8]
    count = iter(range(10**9))

    def start() -> Any:
        i = next(count)
        return workflow_start(
            submitter=alice,
            template_key="expense-approval",
            subject_type="bench-tenant-check",
            subject_id=f"{tag}-{i}",
            data=expense_data(i),
        ).workflow_id

    def decide(user: Any, workflow_id: Any) -> None:
        workflow_decide(
            user=user, workflow_id=workflow_id, decision="approve", request_id=uuid.uuid4().hex
        )

    got: dict[str, dict[str, list[float]]] = {
        v: {p: [] for p in PHASES + FUNCTION_PHASES} for v in variants
    }
    for r in range(rounds):
        for variant in variants if r % 2 == 0 else tuple(reversed(variants)):
            setups[variant]()
            for _ in range(3):  # this variant's plans made before the clock starts
                warm = start()
                decide(bob, warm)
                decide(fiona, warm)
            f0, c0 = in_functions(), backend_cpu_seconds(pid)
            ids = [start() for _ in range(n)]
            c1, f1 = backend_cpu_seconds(pid), in_functions()
            for workflow_id in ids:
                decide(bob, workflow_id)
            c2, f2 = backend_cpu_seconds(pid), in_functions()
            for workflow_id in ids:
                decide(fiona, workflow_id)
            c3, f3 = backend_cpu_seconds(pid), in_functions()
            for phase, (a, b) in zip(PHASES, ((c0, c1), (c1, c2), (c2, c3)), strict=True):
                got[variant][phase].append((b - a) * 1000 / n)
            for phase, (a, b) in zip(FUNCTION_PHASES, ((f0, f1), (f1, f2), (f2, f3)), strict=True):
                got[variant][phase].append((b - a) * 1e6 / n)
    setups["current"]()
    return {v: {p: statistics.mean(x) for p, x in phases.items()} for v, phases in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument(
        "--function-time",
        action="store_true",
        help="also the time spent in approvals_acting_tenant and approvals_act_for"
        " (track_functions, per PostgreSQL)",
    )
    ap.add_argument(
        "--variants", default=",".join(VARIANTS), help="which, comma-separated (default: all)"
    )
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        import json

        variants = tuple(args.variants.split(","))
        print(json.dumps(child(args.n, args.rounds, variants, args.function_time)))
        return

    import json

    from _common import ensure_bench_db, server_env

    url = ensure_bench_db()
    scratch = _scratch(url, "tenant_check")
    _make(url, scratch, [])
    try:
        env = server_env(DATABASE_URL=scratch, BENCH_DATABASE_URL=scratch)
        done = subprocess.run(
            [str(VENV_BIN / "python"), __file__, "--child", "--n", str(args.n)]
            + ["--rounds", str(args.rounds), "--variants", args.variants]
            + (["--function-time"] if args.function_time else []),
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.PIPE,
            text=True,
        )
    finally:
        _drop(url, scratch)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    rows = []
    for variant in args.variants.split(","):
        row: list[Any] = [variant]
        for phase in PHASES:
            base = got["no_rls"][phase] if "no_rls" in got else float("nan")
            row += [got[variant][phase], got[variant][phase] - base]
        rows.append(row)
    report = Report("tenant_check", "What the sealed tenant's check costs the write path")
    report.table(
        f"PostgreSQL backend CPU ms per operation, blocks of {args.n}, {args.rounds} rounds,"
        " one connection (above no_rls in the next column)",
        ["variant", "start", "Δ", "manager", "Δ", "finance", "Δ"],
        rows,
    )
    if args.function_time:
        report.table(
            "µs per operation inside approvals_acting_tenant and approvals_act_for"
            " (track_functions: their own time and their callees')",
            ["variant", *PHASES],
            [[v, *(got[v][p] for p in FUNCTION_PHASES)] for v in args.variants.split(",")],
        )
    report.write()


if __name__ == "__main__":
    main()
