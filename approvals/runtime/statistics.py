"""Statistics that keep up with a young database.

Migration 0042 leaves the next automatic ANALYZE of the command path's tables to 20,000
changes (right for a table of millions, which it keeps from waiting hours). A new
installation's tables start never analyzed (migration 0191), sized by their pages; with
no statistics of their columns, bob's inbox read every workflow once per task list (a
nested loop over 620 workflows, 85 ms of database CPU, when the tables carried the
statistics of their empty days) until an ANALYZE came.

``statistics_refresh`` (the periodic job ``refresh-statistics``, every minute) analyzes
each of those tables whose live rows have grown past twice what its statistics say
(and past ``FLOOR`` rows; a table never analyzed counts as none). On a large table that
is the automatic ANALYZE's work long before, so the job finds nothing to do; on a young
one it brings the plans up to the rows within a minute. It reads only the statistics
views, and analyzes at most the tables listed, as the tables' owner (the migrating
role)."""

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
    " WHERE c.relname = ANY(%s)"  # reltuples -1 (never analyzed) counts as none
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
