"""The directory's version: one row the database bumps on every change to people,
groups, memberships, delegations and mail preferences, whoever makes the change (the
admin, a directory sync, plain SQL). The command path reads it in its first round trip
and keeps what it looked up in the directory for as long as it does not move."""

from django.db import migrations, models

TABLES = (
    "approvals_user",
    "approvals_orggroup",
    "approvals_orggroup_members",
    "approvals_delegation",
    "notifications_notificationpreference",
)

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION approvals_directory_changed() RETURNS trigger AS $$
BEGIN
    UPDATE approvals_directoryversion SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""


def _pg_trigger(table: str) -> str:
    return (
        f"CREATE TRIGGER {table}_directory_changed"
        f" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}"
        " FOR EACH STATEMENT EXECUTE FUNCTION approvals_directory_changed();"
    )


def forwards(apps, schema_editor):
    schema_editor.execute("INSERT INTO approvals_directoryversion (id, version) VALUES (1, 0)")
    schema_editor.execute(PG_FUNCTION, params=None)
    for table in TABLES:
        schema_editor.execute(_pg_trigger(table), params=None)


def backwards(apps, schema_editor):
    for table in TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_directory_changed ON {table}")
    schema_editor.execute("DROP FUNCTION IF EXISTS approvals_directory_changed()")


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0012_user_time_zone"),
        ("notifications", "0001_initial"),
    ]
    operations = [
        migrations.CreateModel(
            name="DirectoryVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("version", models.BigIntegerField(default=0)),
            ],
        ),
        migrations.RunPython(forwards, backwards),
    ]
