"""Each person's open tasks counted where their inbox version is kept (migration 0034),
so the inbox page says how many wait after one primary-key lookup instead of counting
10,000 index entries on every page.

The statement-level triggers of 0034 note, with each person, how many of their task
rows a statement added or removed (``12:+3``; a delegation or a request's words note a
person with no change); the one deferred statement at commit that bumps the versions
adds the changes up too, person by person, in id order, as before: a command gains no
statement and no round trip. A TRUNCATE sets every count to 0. A bulk load that skips triggers
(``session_replication_role = replica``) leaves the counts behind: ``SELECT
approvals_inbox_recount()`` counts them again (as the tables' owner: row-level security
would show the function one organisation's tasks).

The trigram GIN index ``task_inbox_search`` (0032) is dropped: at 10,000 tasks a person,
the inbox's text search reads their rows through a (tenant, assignee) index in a few
milliseconds, and a person has far fewer; the index cost every task written (its
trigrams, about 60 a row, and its pending list's clean-ups) and 60 MB at 1,000,000
tasks."""

from django.db import migrations

PG_CREATE = """
ALTER TABLE approvals_inboxversion ADD COLUMN open_tasks bigint NOT NULL DEFAULT 0;

-- Note each person's change in open tasks (no lock taken here).
CREATE FUNCTION approvals_inbox_note_counts(counts text) RETURNS void AS $$
BEGIN
    IF counts IS NULL OR counts = '' THEN
        RETURN;
    END IF;
    PERFORM set_config(
        'approvals.inbox_dirty',
        coalesce(current_setting('approvals.inbox_dirty', true), '') || ',' || counts,
        true
    );
END;
$$ LANGUAGE plpgsql;

-- At commit: bump everyone noted, once each, and add up their changes in open tasks,
-- in id order, in one statement.
CREATE OR REPLACE FUNCTION approvals_inbox_flush_now() RETURNS void AS $$
DECLARE
    noted text := current_setting('approvals.inbox_dirty', true);
BEGIN
    IF noted IS NULL OR noted = '' THEN
        RETURN;
    END IF;
    PERFORM set_config('approvals.inbox_dirty', '', true);
    INSERT INTO approvals_inboxversion AS v (person_id, version, open_tasks)
    SELECT split_part(e, ':', 1)::bigint, 1,
           sum(coalesce(nullif(split_part(e, ':', 2), '')::bigint, 0))
    FROM unnest(string_to_array(noted, ',')) AS e
    WHERE e <> ''
    GROUP BY 1
    ORDER BY 1
    ON CONFLICT (person_id) DO UPDATE
        SET version = v.version + 1, open_tasks = v.open_tasks + excluded.open_tasks;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_tasks_new() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note_counts((
        SELECT string_agg(assignee_id || ':' || n, ',')
        FROM (SELECT assignee_id, count(*) AS n FROM new_rows GROUP BY 1) c
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_tasks_old() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note_counts((
        SELECT string_agg(assignee_id || ':' || -n, ',')
        FROM (SELECT assignee_id, count(*) AS n FROM old_rows GROUP BY 1) c
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- A hand-over moves a task from one person's count to another's; any other change
-- notes its people with no change in count.
CREATE OR REPLACE FUNCTION approvals_inbox_tasks_changed() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note_counts((
        SELECT string_agg(assignee_id || ':' || n, ',')
        FROM (SELECT assignee_id, sum(d) AS n FROM (
                  SELECT assignee_id, -1 AS d FROM old_rows
                  UNION ALL SELECT assignee_id, 1 FROM new_rows) u
              GROUP BY 1) c
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_all_changed() RETURNS trigger AS $$
BEGIN
    IF TG_TABLE_NAME = 'approvals_pendingtask' THEN
        UPDATE approvals_inboxversion SET version = version + 1, open_tasks = 0;
    ELSE
        UPDATE approvals_inboxversion SET version = version + 1;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- Count everyone's open tasks again (after a load that skipped the triggers).
CREATE FUNCTION approvals_inbox_recount() RETURNS void AS $$
BEGIN
    LOCK TABLE approvals_pendingtask IN SHARE MODE;
    UPDATE approvals_inboxversion v SET version = version + 1, open_tasks = 0
    WHERE open_tasks <> 0
      AND NOT EXISTS (SELECT 1 FROM approvals_pendingtask t WHERE t.assignee_id = v.person_id);
    INSERT INTO approvals_inboxversion AS v (person_id, version, open_tasks)
    SELECT assignee_id, 1, count(*) FROM approvals_pendingtask GROUP BY 1 ORDER BY 1
    ON CONFLICT (person_id) DO UPDATE
        SET version = v.version + 1, open_tasks = excluded.open_tasks
        WHERE v.open_tasks <> excluded.open_tasks;
END;
$$ LANGUAGE plpgsql;

SELECT approvals_inbox_recount();

DROP INDEX IF EXISTS task_inbox_search;
"""


# Migration 0034's own definitions of the functions this one replaces (the way back),
# as replacements: a copy of its text, not an import of it.
AS_0034_MADE_THEM = """
CREATE OR REPLACE FUNCTION approvals_inbox_flush_now() RETURNS void AS $$
DECLARE
    noted text := current_setting('approvals.inbox_dirty', true);
BEGIN
    IF noted IS NULL OR noted = '' THEN
        RETURN;
    END IF;
    PERFORM set_config('approvals.inbox_dirty', '', true);
    INSERT INTO approvals_inboxversion AS v (person_id, version)
    SELECT DISTINCT p::bigint, 1
    FROM unnest(string_to_array(noted, ',')) AS p
    WHERE p <> ''
    ORDER BY 1
    ON CONFLICT (person_id) DO UPDATE SET version = v.version + 1;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_tasks_new() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(SELECT DISTINCT assignee_id FROM new_rows));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_tasks_old() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(SELECT DISTINCT assignee_id FROM old_rows));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_tasks_changed() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT assignee_id FROM old_rows UNION SELECT assignee_id FROM new_rows
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE OR REPLACE FUNCTION approvals_inbox_all_changed() RETURNS trigger AS $$
BEGIN
    UPDATE approvals_inboxversion SET version = version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


PG_DROP = f"""
CREATE INDEX IF NOT EXISTS task_inbox_search ON approvals_pendingtask
    USING gin (tenant_id, assignee_id, search_text gin_trgm_ops);

DROP FUNCTION IF EXISTS approvals_inbox_recount();

{AS_0034_MADE_THEM.strip()}

DROP FUNCTION IF EXISTS approvals_inbox_note_counts(text);
ALTER TABLE approvals_inboxversion DROP COLUMN IF EXISTS open_tasks;
"""


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(PG_CREATE, None)


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(PG_DROP, None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0036_daily_seals")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.RunPython(create, drop),
    ]
