"""A member's search under the organisation's policy (row-level security, migration
0035) reads the search indexes through the functions of migration 0043: PostgreSQL may
not use a GIN index for ``@@`` under the policy (the match is not leakproof), so without
them a reference's search walks every workflow of the organisation."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from approvals.models import User, Workflow
from approvals.runtime import tenant_scope
from approvals.web.search import PAGE_SIZE, WorkflowSearch

from ..helpers import second_organisation, start_expense
from .support import searched

pytestmark = pytest.mark.django_db


def _ids(found: WorkflowSearch) -> list[str]:
    return [str(w.pk) for w in found.results(limit=PAGE_SIZE)]


def _ids_of(fn: str, query: str) -> list[Any]:
    with connection.cursor() as cur:
        cur.execute(f"SELECT {fn}(to_tsquery(%s))", [query])  # noqa: S608 (a fixed name)
        return sorted(cur.fetchone()[0])


def _explain(sql: str, params: Any) -> str:
    with connection.cursor() as cur:
        cur.execute("SET LOCAL enable_seqscan = off")
        cur.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cur.fetchall())


def _drop_tenant_indexes() -> None:
    """Inside the test's transaction (rolled back with it): the workflows' indexes that
    lead with the tenant."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'approvals_workflow'"
            " AND indexdef LIKE '%%(tenant_id%%'"
        )
        for (name,) in cur.fetchall():
            cur.execute(f'DROP INDEX "{name}"')


def test_under_the_policy_the_words_index_is_read_through_the_function(
    acme: Any, api: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from approvals.selectors import search_text

    started = [
        start_expense(api("alice"), 4_500_000, subject=f"E-POL-{n}", description="Hotel stay")
        for n in range(6)
    ]
    wanted = started[3].json()["workflowId"]
    hotels = {s.json()["workflowId"] for s in started}
    # the same page without the policy: the words' index serves the condition itself
    assert _ids(searched("audrey", "E-POL-3")) == [wanted]
    # "hotel", in all 6, is common among the newest rows, but there is no window on so
    # few rows: its matches are read first
    monkeypatch.setattr(search_text, "COMMON_MIN_ROWS", 1)
    monkeypatch.setattr(search_text, "_common", {})

    # On so few rows the planner would walk the organisation's own index whatever the
    # condition; with it gone, the plans below show which conditions an index may serve.
    _drop_tenant_indexes()
    outside = searched("audrey", "E-POL-3")
    sql, params = outside.qs.values_list("pk").query.sql_with_params()
    assert "workflow_search_words" in _explain(sql, params)  # no policy: the index serves
    with transaction.atomic(), tenant_scope.acting_for(acme.pk):
        # a reference: its matches read first, through the function
        with CaptureQueriesContext(connection) as captured:
            assert _ids(searched("audrey", "E-POL-3")) == [wanted]
        matches = [q["sql"] for q in captured.captured_queries if "MATERIALIZED" in q["sql"]]
        assert len(matches) == 1 and "approvals_search_ids" in matches[0], matches
        assert any("ts_stat" in q["sql"] for q in captured.captured_queries)

        # a common word, with no window on so few rows: the same
        found = searched("audrey", "hotel")
        with CaptureQueriesContext(connection) as captured:
            assert set(_ids(found)) == hotels
        matches = [q["sql"] for q in captured.captured_queries if "MATERIALIZED" in q["sql"]]
        assert len(matches) == 1 and "approvals_search_ids" in matches[0], matches

        # That query (the organisation's indexes dropped above, as the walk of a large
        # organisation costs more than the ids): the function's ids are the primary
        # key's index condition, and the words only checked on the rows it found.
        sql, params = found.qs.filter(found.words_lookup).values_list("pk").query.sql_with_params()
        plan = _explain(sql, params)
        assert "approvals_workflow_pkey" in plan and "Index Cond: (id = ANY" in plan, plan
        # The words' own condition: under the policy no index may serve the match
        # (``@@`` is not leakproof), so the search states it as the function behind
        # the operator, which the planner estimates as a third of the rows instead of
        # 0.5%, and which only checks the rows found.
        sql, params = found.qs.values_list("pk").query.sql_with_params()
        assert "ts_match_vq(" in sql and "@@" not in sql, sql
        plan = _explain(
            'SELECT "id" FROM "approvals_workflow" WHERE "search_words" @@ %s', ["hotel"]
        )
        assert "workflow_search_words" not in plan and "Filter:" in plan, plan
    # the superuser (no policy): the index serves ``@@``
    plan = _explain('SELECT "id" FROM "approvals_workflow" WHERE "search_words" @@ %s', ["hotel"])
    assert "workflow_search_words" in plan, plan


def test_the_functions_answer_for_the_acting_organisation_only(acme: Any, api: Any) -> None:
    ours = start_expense(api("alice"), 4_500_000, subject="E-OURS", description="Hotel Goa")
    globex, started = second_organisation()
    gina = User.objects.get(username="gina")
    theirs = Workflow.objects.get(pk=started.workflow_id)
    Workflow.objects.filter(pk=theirs.pk).update(summary="Hotel Goa")  # its words follow
    # the cross-tenant role (here the superuser) sees both organisations' hotels
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM approvals_workflow WHERE search_words @@ 'goa'")
        assert cur.fetchone()[0] == 2

    with transaction.atomic(), tenant_scope.acting_for(acme.pk):
        assert [str(i) for i in _ids_of("approvals_search_ids", "goa")] == [
            ours.json()["workflowId"]
        ]
        alice = User.objects.get(username="alice")
        assert _ids_of("approvals_people_named", "alic:*") == [alice.pk]
        assert _ids_of("approvals_people_named", "gina") == []
    with transaction.atomic(), tenant_scope.acting_for(globex.pk):
        assert _ids_of("approvals_search_ids", "goa") == [theirs.pk]
        assert _ids_of("approvals_people_named", "gina") == [gina.pk]
    # acting for no one (the setting blank), the functions answer nothing
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute("SELECT set_config('approvals.tenant', '', true)")
        assert _ids_of("approvals_search_ids", "goa") == []


def test_only_the_app_role_may_call_them_and_their_search_path_is_fixed(db: Any) -> None:
    with connection.cursor() as cur:
        for fn in ("approvals_search_ids(tsquery)", "approvals_people_named(tsquery)"):
            cur.execute(
                "SELECT has_function_privilege('approvals_app', %s, 'EXECUTE'),"
                " has_function_privilege('approvals_system', %s, 'EXECUTE'),"
                " p.prosecdef, p.proconfig FROM pg_proc p WHERE p.oid = %s::regprocedure",
                [fn, fn, fn],
            )
            app, other, definer, config = cur.fetchone()
            assert (app, other, definer) == (True, False, True), fn
            assert any(c.startswith("search_path=") for c in config), config


def test_a_word_naming_a_person_finds_their_requests_under_the_policy(acme: Any, api: Any) -> None:
    mine = start_expense(api("alice"), 4_500_000, description="Taxi").json()["workflowId"]
    start_expense(api("victor"), 4_500_000, description="Taxi")
    outside = _ids(searched("audrey", "alic"))
    assert mine in outside
    with transaction.atomic(), tenant_scope.acting_for(acme.pk):
        assert _ids(searched("audrey", "alic")) == outside
        assert _ids(searched("audrey", "alic taxi")) == [mine]
