"""Statistics that keep up with a young database.

Migration 0041 analyzes the tables when they are made, so on a new database the planner
takes them for empty; migration 0042 then leaves the next automatic ANALYZE of the
command path's tables to 20,000 changes (right for a table of millions, which it keeps
from waiting hours). In between, a new installation's first few hundred requests run
on plans made for empty tables: bob's inbox read every workflow once per task list
(a nested loop over 620 workflows, 85 ms of database CPU) until an ANALYZE came.

``statistics_refresh`` (the periodic job ``refresh-statistics``, every minute) analyzes
each of those tables whose live rows have grown past twice what its statistics say
(and past ``FLOOR`` rows). On a large table that is the automatic ANALYZE's work long
before, so the job finds nothing to do; on a young one it brings the plans up to the
rows within a minute. It reads only the statistics views, and analyzes at most the
tables listed, as the tables' owner (the migrating role)."""

from __future__ import annotations

from django.db import connection

# The tables the command path and the inbox read by key under an organisation's policy
# (migration 0042's, and the rows each inbox read joins).
TABLES = (
    "approvals_workflow",
    "approvals_workflowparticipant",
    "approvals_stepvisit",
    "approvals_pendingtask",
    "approvals_timer",
    "approvals_delegation",
    "approvals_user",
)
# Below this many live rows any plan is cheap: no ANALYZE.
FLOOR = 100

STALE_SQL = (
    "SELECT c.relname FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid"
    " WHERE c.relname = ANY(%s) AND c.reltuples >= 0"  # -1: never analyzed, sized by pages
    " AND s.n_live_tup > 2 * greatest(c.reltuples, %s)"
    " ORDER BY c.relname"
)


def statistics_stale() -> list[str]:
    """The listed tables whose live rows are past twice what their statistics say."""
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute(STALE_SQL, [list(TABLES), FLOOR])
        return [str(name) for (name,) in cursor.fetchall()]


def statistics_refresh() -> list[str]:
    """ANALYZE each table ``statistics_stale`` names; returns their names."""
    stale = statistics_stale()
    with connection.cursor() as cursor:
        for name in stale:
            cursor.execute(f'ANALYZE "{name}"')  # a name from TABLES, never input
    return stale
