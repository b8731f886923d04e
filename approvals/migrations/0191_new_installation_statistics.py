"""On a new installation, the planner sizes the empty tables by their pages instead of
trusting statistics taken while they were empty.

Migration 0041 (and 0040) analyze the tables as they are made. On a new installation that
records every table as analyzed and empty (``reltuples = 0``), and the planner believes
it until the next ANALYZE: the key lookups PostgreSQL runs for each foreign key at
commit (``SELECT 1 FROM ONLY approvals_workflow x WHERE id = $1 FOR KEY SHARE``, a dozen
a decision) were planned as sequential scans and kept so by each connection, so a
decision read every workflow of the installation a dozen times: 2.2 ms of database CPU
at the first hundred requests, 5.0 ms at the sixth hundred, until the job
``refresh-statistics`` analyzed the tables (at most a minute, which at the command
path's rate is thousands of requests).

A table never analyzed (``reltuples = -1``) is sized by its pages, ten at least, so a key
lookup takes its index from the first row on, whatever the statistics, and the job
``refresh-statistics`` analyzes it once it holds a few hundred rows. PostgreSQL resets a
table to never analyzed when it is truncated (a table's owner cannot set the figures
itself before PostgreSQL 18), so this migration truncates the tables that hold nothing,
on a new installation only: no workflow and no event yet. A table is truncated only when
nothing refers to it from a table that holds rows, and emptiness is read from the files'
sizes (a table that ever held a row has a page), which row-level security cannot hide.
The append-only tables allow it for this transaction (``approvals.allow_truncate``): they
hold nothing. An installation with history is left as it is: its tables have rows and
statistics of their own.
"""

from __future__ import annotations

from django.db import migrations

SQL = """
DO $$
DECLARE
    empty regclass[];
    kept regclass[];
    t regclass;
BEGIN
    -- a new installation only: no workflow and no event (partitions included)
    IF pg_catalog.pg_relation_size('approvals_workflow') > 0 OR EXISTS (
        SELECT 1 FROM pg_catalog.pg_partition_tree('approvals_workflowevent') p
        WHERE p.isleaf AND pg_catalog.pg_relation_size(p.relid) > 0
    ) THEN
        RETURN;
    END IF;
    -- the schema's tables with no page, a partitioned table when every partition has none
    SELECT coalesce(array_agg(c.oid::regclass), '{}') INTO empty
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND NOT c.relispartition
      AND ((c.relkind = 'r' AND pg_catalog.pg_relation_size(c.oid) = 0)
        OR (c.relkind = 'p' AND NOT EXISTS (
              SELECT 1 FROM pg_catalog.pg_partition_tree(c.oid) p
              WHERE p.isleaf AND pg_catalog.pg_relation_size(p.relid) > 0)));
    -- TRUNCATE refuses a table referred to from one left out: leave those out too
    LOOP
        SELECT coalesce(array_agg(x), '{}') INTO kept FROM unnest(empty) AS x
        WHERE NOT EXISTS (
            SELECT 1 FROM pg_catalog.pg_constraint k
            JOIN pg_catalog.pg_class r ON r.oid = k.conrelid
            WHERE k.contype = 'f' AND k.confrelid = x AND NOT r.relispartition
              AND k.conrelid <> ALL (empty));
        EXIT WHEN pg_catalog.cardinality(kept) = pg_catalog.cardinality(empty);
        empty := kept;
    END LOOP;
    IF pg_catalog.cardinality(empty) = 0 THEN
        RETURN;
    END IF;
    FOREACH t IN ARRAY empty LOOP
        EXECUTE pg_catalog.format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', t);
    END LOOP;
    -- still empty now that nothing else can write them
    IF EXISTS (
        SELECT 1 FROM unnest(empty) AS x
        JOIN LATERAL pg_catalog.pg_partition_tree(x) p ON p.isleaf
        WHERE pg_catalog.pg_relation_size(p.relid) > 0
    ) THEN
        RETURN;
    END IF;
    PERFORM pg_catalog.set_config('approvals.allow_truncate', 'on', true);
    EXECUTE 'TRUNCATE ' || (SELECT pg_catalog.string_agg(x::text, ', ') FROM unnest(empty) AS x);
    PERFORM pg_catalog.set_config('approvals.allow_truncate', 'off', true);
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [("approvals", "0190_policies_of_the_new_tables")]

    # Nothing to undo: the tables were empty and stay so.
    operations = [migrations.RunSQL(SQL, migrations.RunSQL.noop)]
