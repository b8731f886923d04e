"""The audit export in the admin: the workflow list's actions and the export page."""

from __future__ import annotations

import csv
import html
import io
import json
from typing import Any

import pytest
from django.test import Client

from approvals.models import User, WorkflowEvent, time_bounds

from .support import run_expenses

pytestmark = pytest.mark.django_db


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def test_the_action_exports_the_selected_workflows(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 3)
    response = _client("audrey").post(
        "/admin/approvals/workflow/",
        {"action": "export_csv", "_selected_action": ids[:2], "index": 0},
    )
    assert response.status_code == 200
    assert response["Content-Disposition"].endswith('.csv"')
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert {r["workflow_id"] for r in rows} == set(ids[:2])
    assert len(rows) == WorkflowEvent.objects.filter(workflow_id__in=ids[:2]).count()


def test_the_page_streams_the_filtered_export(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 2)
    client = _client("audrey")
    page = client.get("/admin/approvals/workflow/audit-export/")
    assert page.status_code == 200 and b"Export the audit trail" in page.content
    assert b"Export the audit trail" in client.get("/admin/approvals/workflow/").content

    response = client.get(
        "/admin/approvals/workflow/audit-export/", {"format": "jsonl", "subject": "E-1"}
    )
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    events, statement = lines[:-1], json.loads(lines[-1])["export"]
    assert events and all(ids[1] in line for line in events)
    assert statement["filters"] == {"subject": "E-1"}


def test_bad_input_on_the_page_is_shown_and_exports_nothing(acme: Any, api: Any) -> None:
    run_expenses(api, 1)
    response = _client("audrey").get(
        "/admin/approvals/workflow/audit-export/", {"format": "csv", "since": "yesterday"}
    )
    assert response.status_code == 200
    assert not response.streaming
    assert b"Enter a valid date/time." in response.content


def test_a_finance_admin_may_not_export(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 1)
    client = _client("fiona")
    assert client.get("/admin/approvals/workflow/audit-export/").status_code == 403
    response = client.post(
        "/admin/approvals/workflow/", {"action": "export_csv", "_selected_action": ids}
    )
    assert response.status_code == 403


@pytest.mark.parametrize("field", ["since", "until"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("2026-01-01T00:00:00+16:00", time_bounds.OFFSET_OUT_OF_RANGE),
        ("2026-01-01T00:00:00-16:00", time_bounds.OFFSET_OUT_OF_RANGE),
        ("9999-12-31T23:59:59+16:00", time_bounds.OFFSET_OUT_OF_RANGE),
        ("9999-12-31 23:59", time_bounds.MOMENT_OUT_OF_RANGE),
    ],
)
def test_a_time_out_of_reach_on_the_export_page_is_shown_and_exports_nothing(
    acme: Any, api: Any, field: str, value: str, problem: str
) -> None:
    run_expenses(api, 1)

    response = _client("audrey").get(
        "/admin/approvals/workflow/audit-export/", {"format": "csv", field: value}
    )

    assert response.status_code == 200
    assert not response.streaming
    assert html.escape(problem).encode() in response.content
