"""Write-ahead log per start and per decision, with time-ordered and with random workflow ids.

    .venv/bin/python bench/wal_per_command.py [--n 300] [--rounds 2]

In one process on one connection, for each kind of id in turn (``uuid7``, the model's
default since migration 0260, and ``uuid4``, the random ids before it, set as the
field's default for that round): a CHECKPOINT, then ``--n`` starts and as many manager
decisions, then the same again with no checkpoint between. The log's growth is read
from ``pg_current_wal_insert_lsn()`` around each batch, the full-page images from
``pg_stat_wal`` (the whole server's: run it on a quiet machine). The first batch after a
checkpoint is where random ids cost most: the first change to a page since the last
checkpoint writes the whole page into the log, and a random id touches a random page of
every index keyed by it. The figures are bytes, not times: the machine's load does not
move them.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, expense_data, setup_django  # noqa: E402

SUBJECT_TYPE = "bench-wal"


def _position() -> tuple[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_insert_lsn()::text, wal_fpi FROM pg_stat_wal")
        lsn, fpi = cursor.fetchone()
    return lsn, int(fpi)


def _bytes_between(a: str, b: str) -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", [b, a])
        return float(cursor.fetchone()[0])


def _batch(n: int, run: str, users: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """``n`` starts then ``n`` decisions; per operation: log bytes and full-page images."""
    from approvals.services.workflows import workflow_decide, workflow_start

    out: dict[str, tuple[float, float]] = {}
    ids: list[Any] = []

    def starts() -> None:
        for i in range(n):
            ids.append(
                workflow_start(
                    submitter=users["alice"],
                    template_key="expense-approval",
                    subject_type=SUBJECT_TYPE,
                    subject_id=f"{run}-{i}",
                    data=expense_data(i),
                ).workflow_id
            )

    def decisions() -> None:
        for workflow_id in ids:
            workflow_decide(
                user=users["bob"],
                workflow_id=workflow_id,
                decision="approve",
                request_id=uuid.uuid4().hex,
            )

    for label, op in (("start", starts), ("decision", decisions)):
        lsn0, fpi0 = _position()
        op()
        lsn1, fpi1 = _position()
        out[label] = (_bytes_between(lsn0, lsn1) / n, (fpi1 - fpi0) / n)
    return out


def _default(field: Any, make: Callable[[], uuid.UUID]) -> None:
    """``make`` as the field's default (Django keeps the default's getter once read)."""
    field.default = make
    field.__dict__.pop("_get_default", None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    setup_django()
    from _common import seed
    from django.db import connection
    from uuid_utils.compat import uuid7

    from approvals.models import User, Workflow

    seed()
    users = {u: User.objects.get(username=u) for u in ("alice", "bob")}
    pk = Workflow._meta.pk
    assert pk is not None
    kinds: dict[str, Callable[[], uuid.UUID]] = {"uuid7": uuid7, "uuid4": uuid.uuid4}
    run = uuid.uuid4().hex[:8]
    _batch(50, f"{run}-warm", users)
    rows = []
    try:
        for r in range(args.rounds):
            for kind, make in kinds.items():
                _default(pk, make)
                with connection.cursor() as cursor:
                    cursor.execute("CHECKPOINT")
                first = _batch(args.n, f"{run}-{r}-{kind}-a", users)
                then = _batch(args.n, f"{run}-{r}-{kind}-b", users)
                for label in ("start", "decision"):
                    rows.append(
                        [
                            r + 1,
                            kind,
                            label,
                            first[label][0],
                            first[label][1],
                            then[label][0],
                            then[label][1],
                        ]
                    )
    finally:
        _default(pk, uuid7)
    report = Report("wal_per_command", "Write-ahead log per command, by kind of workflow id")
    report.table(
        f"Log bytes and full-page images per operation ({args.n:,} of each per batch)",
        [
            "round",
            "workflow ids",
            "operation",
            "bytes, after a checkpoint",
            "page images",
            "bytes, next batch",
            "page images",
        ],
        rows,
    )
    report.write()


if __name__ == "__main__":
    main()
