"""What the inbox page sorts and filters on, on the task rows themselves: the kind, the
amount in minor units, the requester's sort name and a search text, each sort an index
led by (tenant, assignee), so a page of a person's 10,000 tasks is a walk of one index
instead of a read of all their workflows. The text search has a trigram GIN index over
(tenant, assignee, search_text) (pg_trgm and btree_gin, both shipped with PostgreSQL).

The rows there are filled from their workflows here; new ones are filled by the command
path (``runtime.projections.task_facts``), and ``rebuild_read_models`` derives the same."""

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


SEARCH_SQL = """
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX IF NOT EXISTS task_inbox_search ON approvals_pendingtask
    USING gin (tenant_id, assignee_id, search_text gin_trgm_ops);
"""

# Largest first, the tasks without an amount last.
AMOUNT_INDEX_SQL = """
CREATE INDEX IF NOT EXISTS task_inbox_amount ON approvals_pendingtask
    (tenant_id, assignee_id, amount_minor DESC NULLS LAST, due_at, id)
"""

# The facts but the amount, from each task's workflow and its submitter.
FILL_SQL = """
UPDATE approvals_pendingtask t SET
    template_key = w.template_key,
    requester_key = left(lower(coalesce(nullif(u.first_name, ''), u.username, '')), 150),
    search_text = lower(concat_ws(E'\\n', nullif(w.summary, ''), nullif(w.subject_id, ''),
        nullif(u.first_name, ''), nullif(u.last_name, ''), nullif(u.username, '')))
FROM approvals_workflow w LEFT JOIN approvals_user u ON u.id = w.submitter_id
WHERE w.id = t.workflow_id
"""

# The amount of one template version's tasks: its first money field the data holds as
# a whole number (the fields in the schema's order, as ``data_words.amount_line``).
AMOUNT_SQL = """
UPDATE approvals_pendingtask t SET amount_minor = CASE {whens} END
FROM approvals_workflow w WHERE w.id = t.workflow_id AND w.template_id = %s
"""
WHEN = (
    "WHEN jsonb_typeof(w.data -> %s) = 'number' AND (w.data ->> %s) ~ '^-?[0-9]{1,18}$'"
    " THEN (w.data ->> %s)::bigint"
)


def _money_fields(schema: Any) -> dict[str, str]:
    """Integer fields annotated ``"x-money": {"currency": FIELD}`` -> the currency field,
    in the schema's order (this migration's copy of ``data_words.money_fields``)."""
    out: dict[str, str] = {}
    for name, spec in ((schema or {}).get("properties") or {}).items():
        money = spec.get("x-money") if isinstance(spec, dict) else None
        if isinstance(money, dict):
            currency = money.get("currency")
            out[name] = currency if isinstance(currency, str) else ""
        elif money is True:
            out[name] = ""
    return out


def fill(apps: Any, schema_editor: Any) -> None:
    template_model = apps.get_model("approvals", "WorkflowTemplate")
    money = {}
    for pk, definition in template_model.objects.values_list("id", "definition"):
        schema = definition.get("schema") if isinstance(definition, dict) else None
        money[pk] = list(_money_fields(schema if isinstance(schema, dict) else None))
    # The deferred foreign-key checks the updates queue run now, not at COMMIT: a
    # table with pending trigger events cannot be indexed in the same transaction.
    schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    schema_editor.execute(FILL_SQL)
    for pk, names in money.items():
        if names:
            sql = AMOUNT_SQL.format(whens=" ".join([WHEN] * len(names)))
            schema_editor.execute(sql, [p for n in names for p in (n, n, n)] + [pk])


class Migration(migrations.Migration):
    dependencies = [("approvals", "0031_rupee_sign")]
    operations = [
        migrations.AddField(
            model_name="pendingtask",
            name="template_key",
            field=models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        migrations.AddField(
            model_name="pendingtask",
            name="amount_minor",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="pendingtask",
            name="requester_key",
            field=models.CharField(blank=True, db_default="", default="", max_length=150),
        ),
        migrations.AddField(
            model_name="pendingtask",
            name="search_text",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="pendingtask",
            index=models.Index(
                fields=["tenant", "assignee", "created_at", "id"], name="task_inbox_waiting"
            ),
        ),
        migrations.AddIndex(
            model_name="pendingtask",
            index=models.Index(
                fields=["tenant", "assignee", "requester_key", "due_at", "id"],
                name="task_inbox_requester",
            ),
        ),
        migrations.AddIndex(
            model_name="pendingtask",
            index=models.Index(
                fields=["tenant", "assignee", "template_key", "due_at", "id"],
                name="task_inbox_kind",
            ),
        ),
        postgres_sql(AMOUNT_INDEX_SQL, "DROP INDEX IF EXISTS task_inbox_amount"),
        postgres_sql(SEARCH_SQL, "DROP INDEX IF EXISTS task_inbox_search"),
    ]
