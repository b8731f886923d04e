"""On PostgreSQL, the database itself refuses UPDATE, DELETE and TRUNCATE of workflow
events. A test database may allow TRUNCATE (``approvals.allow_truncate = on``) so a test
run can empty it between tests; no deployment sets it."""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION approvals_refuse_event_change() RETURNS trigger AS $$
BEGIN
    -- Only a database set up for throw-away test runs may be emptied.
    IF TG_OP = 'TRUNCATE'
       AND current_setting('approvals.allow_truncate', true) = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'workflow events are append-only (% refused)', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER approvals_workflowevent_append_only
    BEFORE UPDATE OR DELETE ON approvals_workflowevent
    FOR EACH ROW EXECUTE FUNCTION approvals_refuse_event_change();

CREATE TRIGGER approvals_workflowevent_no_truncate
    BEFORE TRUNCATE ON approvals_workflowevent
    FOR EACH STATEMENT EXECUTE FUNCTION approvals_refuse_event_change();
"""

DROP = """
DROP TRIGGER IF EXISTS approvals_workflowevent_no_truncate ON approvals_workflowevent;
DROP TRIGGER IF EXISTS approvals_workflowevent_append_only ON approvals_workflowevent;
DROP FUNCTION IF EXISTS approvals_refuse_event_change();
"""


def forwards(apps, schema_editor):
    schema_editor.execute(CREATE, params=None)


def backwards(apps, schema_editor):
    schema_editor.execute(DROP, params=None)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
