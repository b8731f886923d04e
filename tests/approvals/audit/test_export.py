"""The audit export: CSV and JSON Lines, filters, one organisation only, who may, the
API's cursor pages, and memory that stays flat as the history grows."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import tracemalloc
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from approvals import access
from approvals.audit.export import COLUMNS, CSV_COLUMNS, JSONL_FIELDS, ExportFilter, audit_export
from approvals.models import Tenant, User, Workflow, WorkflowEvent, time_bounds

from ..helpers import decide, second_organisation, start_expense
from .support import bulk_history, run_expenses

pytestmark = pytest.mark.django_db


@pytest.fixture
def globex(acme: Any, api: Any) -> Tenant:
    """A second organisation with a workflow of its own."""
    globex, _ = second_organisation()
    assert WorkflowEvent.objects.filter(tenant=globex).exists()
    return globex


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_has_the_header_and_one_row_per_event(acme: Any, api: Any) -> None:
    run_expenses(api, 3)
    out = io.StringIO()

    call_command("export_audit", "--tenant", "acme", "--format", "csv", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0].split(",") == list(CSV_COLUMNS)
    rows = _csv(out.getvalue())
    assert len(rows) == WorkflowEvent.objects.filter(tenant=acme).count() > 6
    decided = [r for r in rows if r["type"] == "DecisionRecorded"]
    assert {(r["actor"], r["decision"], r["step"]) for r in decided} == {
        ("bob", "approve", "manager")
    }
    assert all(r["time"].endswith("Z") and len(r["hash"]) == 64 for r in rows)


def test_jsonl_parses_and_chains(acme: Any, api: Any) -> None:
    run_expenses(api, 2)
    out = io.StringIO()

    call_command("export_audit", "--tenant", "acme", "--format", "jsonl", stdout=out)

    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    rows = [r for r in rows if "seq" in r]  # the events, not the export's statement
    assert len(rows) == WorkflowEvent.objects.filter(tenant=acme).count()
    assert set(rows[0]) == set(JSONL_FIELDS)  # the CSV's columns and what a hash covers
    by_workflow: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_workflow.setdefault(r["workflow_id"], []).append(r)
    for history in by_workflow.values():
        history.sort(key=lambda r: r["seq"])
        assert [r["prev_hash"] for r in history[1:]] == [r["hash"] for r in history[:-1]]
        assert history[0]["template_key"] == "expense-approval"


def test_filters(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 2)
    victor_wf = start_expense(api("victor"), 4_500_000, subject="V-9").json()["workflowId"]
    tenant = acme.pk

    def workflows(**kw: Any) -> set[str]:
        return {
            r.split(",")[0]
            for r in list(audit_export(tenant_id=tenant, filters=ExportFilter(**kw), fmt="csv"))[1:]
        }

    assert workflows(subject="E-0") == {ids[0]}
    assert workflows(subject="expense:E-1") == {ids[1]}
    assert workflows(person="victor") == {victor_wf}
    assert workflows(person="bob") == set(ids)  # bob decided both
    assert workflows(template="purchase-request") == set()
    assert workflows(template="expense-approval") == {*ids, victor_wf}
    assert workflows(status="PENDING_FINANCE") | workflows(status="RUNNING") >= set(ids)
    last = WorkflowEvent.objects.filter(tenant=acme).order_by("-created_at").first()
    assert last is not None
    assert workflows(since=last.created_at + dt.timedelta(microseconds=1)) == set()
    assert workflows(until=WorkflowEvent.objects.order_by("created_at")[0].created_at) == set()
    assert workflows(since=last.created_at) == {str(last.workflow_id)}


def test_another_organisations_events_never_appear(globex: Tenant, api: Any) -> None:
    run_expenses(api, 1)
    foreign = {str(w) for w in Workflow.objects.filter(tenant=globex).values_list("pk", flat=True)}

    for who in ("audrey", "olga", "admin"):
        body = api(who).get("/api/audit/export?format=jsonl")
        assert body.status_code == 200
        rows = [json.loads(x) for x in b"".join(body.streaming_content).splitlines()]
        rows = [r for r in rows if "seq" in r]
        assert rows and not {r["workflow_id"] for r in rows} & foreign
        page = api(who).get("/api/audit/events?limit=1000").json()
        assert page["events"] and not {e["workflow_id"] for e in page["events"]} & foreign
    out = io.StringIO()
    call_command("export_audit", "--tenant", "globex", "--format", "jsonl", stdout=out)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert {x["workflow_id"] for x in lines if "seq" in x} == foreign


@pytest.mark.parametrize(
    ("who", "status"),
    [("alice", 403), ("bob", 403), ("fiona", 403), ("audrey", 200), ("olga", 200)],
)
def test_who_may_export(acme: Any, api: Any, who: str, status: int) -> None:
    run_expenses(api, 1)
    for url in ("/api/audit/events", "/api/audit/export?format=csv"):
        response = api(who).get(url)
        assert response.status_code == status, (url, response.content[:200])
        if status == 403:
            assert response.json()["error"]["message"] == access.FORBIDDEN_AUDIT
    assert access.may_audit(User.objects.get(username=who)) == (status == 200)


def test_export_response_is_a_named_download(acme: Any, api: Any) -> None:
    run_expenses(api, 1)
    response = api("audrey").get("/api/audit/export?format=csv&template=expense-approval")
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="audit-acme-')
    rows = _csv(b"".join(response.streaming_content).decode())
    assert len(rows) == WorkflowEvent.objects.filter(tenant=acme).count()


@pytest.mark.parametrize(
    "query",
    ["format=xml", "since=yesterday", "limit=0", "limit=5000", "cursor=forged:abc:def"],
)
def test_bad_input_is_refused(acme: Any, api: Any, query: str) -> None:
    run_expenses(api, 1)
    url = "/api/audit/export" if query.startswith("format") else "/api/audit/events"
    if query.startswith("since"):
        url = "/api/audit/export"
    response = api("audrey").get(f"{url}?{query}")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] in {"VALIDATION_ERROR", "BAD_CURSOR"}


def test_export_command_refuses_bad_input(acme: Any) -> None:
    with pytest.raises(CommandError, match="No organisation"):
        call_command("export_audit", "--tenant", "nope", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--since"):
        call_command("export_audit", "--tenant", "acme", "--since", "soon", stdout=io.StringIO())


def test_cursor_pages_return_every_event_exactly_once(acme: Any, api: Any) -> None:
    run_expenses(api, 2)
    bulk_history(acme, workflows=5, events_each=11)
    client = api("audrey")
    seen: list[int] = []
    url = "/api/audit/events?limit=7"
    pages = 0
    while True:
        body = client.get(url).json()
        seen += [e["event_id"] for e in body["events"]]
        pages += 1
        # an event appended mid-way lands after the cursor and is seen once too
        if pages == 2:
            start_expense(api("victor"), 4_500_000, subject="late")
        if body["nextCursor"] is None:
            break
        url = f"/api/audit/events?limit=7&cursor={body['nextCursor']}"
    expected = set(WorkflowEvent.objects.filter(tenant=acme).values_list("pk", flat=True))
    assert len(seen) == len(set(seen))
    assert set(seen) == expected
    assert pages == -(-len(expected) // 7)  # full pages, then the rest


def _peak_kib(tenant_id: int) -> tuple[float, int]:
    tracemalloc.start()
    try:
        count = sum(1 for _ in audit_export(tenant_id=tenant_id, filters=ExportFilter(), fmt="csv"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1024, count - 1


def test_export_memory_stays_flat_as_history_grows(acme: Any, settings: Any) -> None:
    settings.APPROVALS_AUDIT_EXPORT_CHUNK = 1000
    bulk_history(acme, workflows=5, events_each=1000)
    small, n_small = _peak_kib(acme.pk)
    bulk_history(acme, workflows=15, events_each=1000, start=dt.datetime(2026, 6, 1, tzinfo=dt.UTC))
    large, n_large = _peak_kib(acme.pk)

    assert (n_small, n_large) == (5000, 20000)
    assert large < 2 * small, (small, large)


def test_csv_escapes_formulas_in_the_actor_and_on_behalf_of_columns(acme: Any, api: Any) -> None:
    # given user names a spreadsheet would run: bob away, "@victor" deciding for "+bob"
    from approvals.services.delegations import delegation_set

    User.objects.filter(username="bob").update(username="+bob")
    User.objects.filter(username="victor").update(username="@victor")
    now = dt.datetime.now(dt.UTC)
    delegation_set(
        user=User.objects.get(username="+bob"),
        delegate=User.objects.get(username="@victor"),
        starts_at=now - dt.timedelta(hours=1),
        ends_at=now + dt.timedelta(days=1),
    )
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    assert decide(api("@victor"), wid, "approve", "x-1").status_code == 200

    response = api("audrey").get("/api/audit/export?format=csv")
    rows = _csv(b"".join(response.streaming_content).decode())

    decided = [r for r in rows if r["type"] == "DecisionRecorded"]
    assert [(r["actor"], r["on_behalf_of"]) for r in decided] == [("'@victor", "'+bob")]


# Times no real zone has (beyond ±14:00), or past the range of dates a person may give:
# they were accepted, and the export broke its stream after its 200, or a traceback.
OUT_OF_REACH = [
    pytest.param("2026-01-01T00:00:00+16:00", time_bounds.OFFSET_OUT_OF_RANGE, id="+16:00"),
    pytest.param("2026-01-01T00:00:00-16:00", time_bounds.OFFSET_OUT_OF_RANGE, id="-16:00"),
    pytest.param("2026-01-01T00:00:00+14:01", time_bounds.OFFSET_OUT_OF_RANGE, id="+14:01"),
    pytest.param("9999-12-31T23:59:59+16:00", time_bounds.OFFSET_OUT_OF_RANGE, id="9999+16:00"),
    pytest.param("9999-12-31T23:59:59+14:00", time_bounds.MOMENT_OUT_OF_RANGE, id="9999+14:00"),
    pytest.param("0001-01-01T00:00:00-14:00", time_bounds.MOMENT_OUT_OF_RANGE, id="year-1"),
    pytest.param("9999-12-31", time_bounds.MOMENT_OUT_OF_RANGE, id="9999-day"),
]


@pytest.mark.parametrize("field", ["since", "until"])
@pytest.mark.parametrize(("value", "problem"), OUT_OF_REACH)
@pytest.mark.parametrize("url", ["/api/audit/export", "/api/audit/events"])
def test_an_audit_time_out_of_reach_is_a_400_in_words(
    acme: Any, api: Any, url: str, field: str, value: str, problem: str
) -> None:
    run_expenses(api, 1)

    response = api("audrey").get(url, {field: value})

    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"] == f"{field}: {problem}"


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize(("value", "problem"), OUT_OF_REACH)
def test_the_export_command_refuses_a_time_out_of_reach_in_one_line(
    acme: Any, option: str, value: str, problem: str
) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("export_audit", "--tenant", "acme", option, value, stdout=out)

    assert str(refused.value) == f"{option}: {problem}"
    assert out.getvalue() == ""


def test_an_audit_time_within_reach_is_taken(acme: Any, api: Any) -> None:
    run_expenses(api, 1)
    for value in ("2026-01-01T00:00:00+14:00", "2026-01-01T00:00:00-12:00", "1970-01-01"):
        assert api("audrey").get("/api/audit/events", {"since": value}).status_code == 200
    out = io.StringIO()
    call_command(
        "export_audit", "--tenant", "acme", "--since", "1970-01-01T00:00:00+14:00", stdout=out
    )
    assert out.getvalue().startswith(COLUMNS[0])
