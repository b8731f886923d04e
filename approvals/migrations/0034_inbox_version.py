"""Each person's inbox version (approvals.api.inbox_etag): a counter bumped in the
transaction of every change to what their inbox shows, so a repeated read that changed
nothing is answered 304 after one primary-key lookup.

Statement-level triggers on the pending tasks and the delegations (with transition
tables) only note who changed in a transaction-local setting; one deferred trigger
bumps them all at commit, in id order, in one statement. So a command gains no statement and no round trip, holds
a person's counter row only for the last moment of its commit, and two commands never
take two people's rows in opposite orders (no deadlock)."""

from django.db import migrations

PG_CREATE = """
CREATE TABLE approvals_inboxversion (
    person_id bigint PRIMARY KEY,
    version bigint NOT NULL
);

-- Note the people of one statement's changed rows (no lock taken here).
CREATE FUNCTION approvals_inbox_note(people bigint[]) RETURNS void AS $$
BEGIN
    IF people IS NULL OR cardinality(people) = 0 THEN
        RETURN;
    END IF;
    PERFORM set_config(
        'approvals.inbox_dirty',
        coalesce(current_setting('approvals.inbox_dirty', true), '') || ','
            || array_to_string(people, ','),
        true
    );
END;
$$ LANGUAGE plpgsql;

-- At commit: bump everyone noted, once each, in id order, in one statement.
CREATE FUNCTION approvals_inbox_flush_now() RETURNS void AS $$
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

CREATE FUNCTION approvals_inbox_flush() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_flush_now();
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION approvals_inbox_tasks_new() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(SELECT DISTINCT assignee_id FROM new_rows));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION approvals_inbox_tasks_old() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(SELECT DISTINCT assignee_id FROM old_rows));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION approvals_inbox_tasks_changed() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT assignee_id FROM old_rows UNION SELECT assignee_id FROM new_rows
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- Everyone, after a TRUNCATE (tests, a rebuild): no transition table says who.
CREATE FUNCTION approvals_inbox_all_changed() RETURNS trigger AS $$
BEGIN
    UPDATE approvals_inboxversion SET version = version + 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER approvals_inbox_task_insert AFTER INSERT ON approvals_pendingtask
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_tasks_new();
CREATE TRIGGER approvals_inbox_task_delete AFTER DELETE ON approvals_pendingtask
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_tasks_old();
CREATE TRIGGER approvals_inbox_task_update AFTER UPDATE ON approvals_pendingtask
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_tasks_changed();
CREATE TRIGGER approvals_inbox_task_truncate AFTER TRUNCATE ON approvals_pendingtask
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_all_changed();
CREATE CONSTRAINT TRIGGER approvals_inbox_task_flush
    AFTER INSERT OR UPDATE OR DELETE ON approvals_pendingtask
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION approvals_inbox_flush();

-- A delegation (an absence) names two people: who is away and who stands in.
CREATE FUNCTION approvals_inbox_delegations_new() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT user_id FROM new_rows UNION SELECT delegate_id FROM new_rows
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION approvals_inbox_delegations_old() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT user_id FROM old_rows UNION SELECT delegate_id FROM old_rows
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION approvals_inbox_delegations_changed() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT user_id FROM old_rows UNION SELECT delegate_id FROM old_rows
        UNION SELECT user_id FROM new_rows UNION SELECT delegate_id FROM new_rows
    ));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER approvals_inbox_delegation_insert AFTER INSERT ON approvals_delegation
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_delegations_new();
CREATE TRIGGER approvals_inbox_delegation_delete AFTER DELETE ON approvals_delegation
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_delegations_old();
CREATE TRIGGER approvals_inbox_delegation_update AFTER UPDATE ON approvals_delegation
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_delegations_changed();
CREATE TRIGGER approvals_inbox_delegation_truncate AFTER TRUNCATE ON approvals_delegation
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_inbox_all_changed();
CREATE CONSTRAINT TRIGGER approvals_inbox_delegation_flush
    AFTER INSERT OR UPDATE OR DELETE ON approvals_delegation
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION approvals_inbox_flush();

-- A request's line or amount shown on tasks whose rows did not change.
CREATE FUNCTION approvals_inbox_workflow_words() RETURNS trigger AS $$
BEGIN
    PERFORM approvals_inbox_note(ARRAY(
        SELECT assignee_id FROM approvals_pendingtask WHERE workflow_id = NEW.id
    ));
    PERFORM approvals_inbox_flush_now();
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER approvals_inbox_workflow_words
    AFTER UPDATE ON approvals_workflow
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (OLD.summary IS DISTINCT FROM NEW.summary
          OR OLD.amount_display IS DISTINCT FROM NEW.amount_display)
    EXECUTE FUNCTION approvals_inbox_workflow_words();
"""

PG_DROP = """
DROP TRIGGER IF EXISTS approvals_inbox_workflow_words ON approvals_workflow;
DROP TRIGGER IF EXISTS approvals_inbox_delegation_flush ON approvals_delegation;
DROP TRIGGER IF EXISTS approvals_inbox_delegation_truncate ON approvals_delegation;
DROP TRIGGER IF EXISTS approvals_inbox_delegation_update ON approvals_delegation;
DROP TRIGGER IF EXISTS approvals_inbox_delegation_delete ON approvals_delegation;
DROP TRIGGER IF EXISTS approvals_inbox_delegation_insert ON approvals_delegation;
DROP TRIGGER IF EXISTS approvals_inbox_task_flush ON approvals_pendingtask;
DROP TRIGGER IF EXISTS approvals_inbox_task_truncate ON approvals_pendingtask;
DROP TRIGGER IF EXISTS approvals_inbox_task_update ON approvals_pendingtask;
DROP TRIGGER IF EXISTS approvals_inbox_task_delete ON approvals_pendingtask;
DROP TRIGGER IF EXISTS approvals_inbox_task_insert ON approvals_pendingtask;
DROP FUNCTION IF EXISTS approvals_inbox_workflow_words();
DROP FUNCTION IF EXISTS approvals_inbox_delegations_changed();
DROP FUNCTION IF EXISTS approvals_inbox_delegations_old();
DROP FUNCTION IF EXISTS approvals_inbox_delegations_new();
DROP FUNCTION IF EXISTS approvals_inbox_all_changed();
DROP FUNCTION IF EXISTS approvals_inbox_tasks_changed();
DROP FUNCTION IF EXISTS approvals_inbox_tasks_old();
DROP FUNCTION IF EXISTS approvals_inbox_tasks_new();
DROP FUNCTION IF EXISTS approvals_inbox_flush();
DROP FUNCTION IF EXISTS approvals_inbox_flush_now();
DROP FUNCTION IF EXISTS approvals_inbox_note(bigint[]);
DROP TABLE IF EXISTS approvals_inboxversion;
"""


def create(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(PG_CREATE, None)


def drop(apps, schema_editor):  # type: ignore[no-untyped-def]
    schema_editor.execute(PG_DROP, None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0033_analytics_rollup")]
    operations: list[migrations.operations.base.Operation] = [
        migrations.RunPython(create, drop),
    ]
