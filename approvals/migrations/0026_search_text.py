"""The search's words: a GIN index over each workflow's text (its reference, its summary
and every string in its data), which PostgreSQL fills itself on the command path's own
INSERT and UPDATE, so a start or a decision makes no extra round trip. The expression is
``approvals.selectors.search_text.VECTOR`` to the letter: the planner uses the index only
for the same expression.

And ``workflow_newest`` (the tenant's workflows, newest first): a word in one request of
twenty has thousands of matches, and their first page is found walking the newest rows
until 25 have it, instead of reading and sorting every match."""

from typing import Any

from django.db import migrations, models


def postgres_sql(sql: str, reverse_sql: str) -> migrations.RunPython:
    """``sql`` forwards and ``reverse_sql`` backwards, each handed whole to the schema
    editor (this migration's own copy: a migration imports no helper of the app)."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(sql)

    def backwards(apps: Any, schema_editor: Any) -> None:
        schema_editor.execute(reverse_sql)

    return migrations.RunPython(forwards, backwards)


# 'english': requests are written in English, and its stems let "hotels" find "Hotel" and
# "travelling" find "travel"; names, places and codes pass through as they are, and stop
# words ("the", "for") are left out of both sides. Words are matched whole (no prefix):
# a prefix is a union of the index's lists, which cannot skip along a rarer word's list
# as whole words do, and its share of the rows is a guess to the planner.
SQL = """
CREATE INDEX IF NOT EXISTS workflow_search_text ON approvals_workflow USING gin (
    (to_tsvector('english'::regconfig, subject_id || ' ' || summary)
     || jsonb_to_tsvector('english'::regconfig, data, '["string"]'::jsonb))
)
"""


# The search's words also find the requests of the people they name: their names'
# index (written when a person is added or renamed, never on the command path).
PEOPLE_SQL = """
CREATE INDEX IF NOT EXISTS user_search_name ON approvals_user USING gin (
    to_tsvector('simple'::regconfig, username || ' ' || first_name || ' ' || last_name)
)
"""


class Migration(migrations.Migration):
    dependencies = [("approvals", "0025_handed_on")]
    operations = [
        migrations.AddIndex(
            model_name="workflow",
            index=models.Index(fields=["tenant", "-created_at"], name="workflow_newest"),
        ),
        postgres_sql(SQL, "DROP INDEX IF EXISTS workflow_search_text"),
        postgres_sql(PEOPLE_SQL, "DROP INDEX IF EXISTS user_search_name"),
    ]
