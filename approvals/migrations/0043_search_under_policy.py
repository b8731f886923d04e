"""Two functions that let a member's search use the search indexes under the policy.

Why: a member's page and API reads run as ``approvals_app`` under the tenant policy
(migration 0035). PostgreSQL then applies the policy's condition before any of the
query's own conditions that are not leakproof, and the full-text match ``@@``
(``ts_match_vq``) is not: it may not be an index condition, so the GIN indexes of the
workflows' words (0040) and of people's names (0026) go unused, and a reference's
search walked every workflow of its organisation (76,470 rows, 154 ms at ten million
events).

``approvals_search_ids(words)`` and ``approvals_people_named(names)`` answer the ids of
the organisation's workflows whose words match, and of its people whose names match,
through those indexes: ``SECURITY DEFINER``, so they read as the role that ran the
migrations (which the policies let read every organisation), but only ever the
organisation named by the transaction's own ``approvals.tenant`` setting, the one its
policy shows; with no setting, nothing. The search asks for ``id = ANY(...)``, a
leakproof comparison that may be an index condition, and the policy still filters every
row read. Each plans its query when called (PL/pgSQL's EXECUTE), with the words and the
organisation known, as the role that ran the migrations: a query planned once for any
words (a SQL function's) walked the organisation's index for a reference, 14 ms
instead of 1 at ten million events. Only ``approvals_app`` may call them (``approvals/sql/policies/grants.sql``), and their
``search_path`` is fixed, so no one can put objects of their own in front of the
tables."""

from typing import Any

from django.db import migrations

# The app role may execute them, once they exist and it does.
SEARCH_FUNCTIONS = ("approvals_search_ids(tsquery)", "approvals_people_named(tsquery)")
SEARCH_FUNCTION_GRANTS = (
    "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'approvals_app') THEN\n"
    + "".join(
        f"    IF to_regprocedure('{fn}') IS NOT NULL THEN"
        f" GRANT EXECUTE ON FUNCTION {fn} TO approvals_app; END IF;\n"
        for fn in SEARCH_FUNCTIONS
    )
    + "END IF; END $$;\n"
)

TENANT = "NULLIF(current_setting('approvals.tenant', true), '')::bigint"


def _ids_function(head: str, kind: str, query: str) -> str:
    """A function ``head`` answering the ids (``kind``) that ``query`` finds, planned
    when called: ``$1`` is the organisation the transaction acts for, ``$2`` the
    function's one argument."""
    return f"""
CREATE OR REPLACE FUNCTION {head} RETURNS {kind}
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = {{schema}}, pg_temp AS $$
DECLARE found {kind};
BEGIN
    EXECUTE 'SELECT coalesce(array_agg(id), ''{{{{}}}}''::{kind}) FROM {query}'
        INTO found USING {TENANT}, $1;
    RETURN found;
END $$;"""


FUNCTIONS = _ids_function(
    "approvals_search_ids(words tsquery)",
    "uuid[]",
    "{schema}.approvals_workflow w WHERE w.tenant_id = $1 AND w.search_words @@ $2",
) + _ids_function(
    "approvals_people_named(names tsquery)",
    "bigint[]",
    "{schema}.approvals_user u WHERE u.tenant_id = $1 AND to_tsvector(''simple''::regconfig,"
    " u.username || '' '' || u.first_name || '' '' || u.last_name) @@ $2",
)


def functions_sql(schema: str) -> str:
    return (
        FUNCTIONS.format(schema=schema)
        + "".join(f"\nREVOKE ALL ON FUNCTION {fn} FROM PUBLIC;" for fn in SEARCH_FUNCTIONS)
        + "\n"
        + SEARCH_FUNCTION_GRANTS
    )


REVERSE_SQL = "".join(f"DROP FUNCTION IF EXISTS {fn};\n" for fn in SEARCH_FUNCTIONS)


def forwards(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT quote_ident(current_schema())")
        (schema,) = cursor.fetchone()
    schema_editor.execute(functions_sql(schema))


def backwards(apps: Any, schema_editor: Any) -> None:
    schema_editor.execute(REVERSE_SQL)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0042_analyze_often")]
    operations = [migrations.RunPython(forwards, backwards)]
