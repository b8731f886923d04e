"""Context where decisions are made: each inbox row shows the fields its workflow
template marks for the row (``"x-row": true``: department, category), how many
receipts the request carries, and who approved it before in this round."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from approvals.web import present

from ..files import PDF, files_root, page_attach, upload
from ..helpers import decide, start_expense
from .support import signed_in

pytestmark = pytest.mark.django_db
__all__ = ["files_root"]  # the fixture, used by name

ROW = re.compile(r'<li class="task[^"]*" data-workflow="(?P<wid>[^"]+)".*?</li>', re.S)


def inbox_row(username: str, wid: str) -> str:
    page = signed_in(username).get("/").content.decode()
    rows = {m.group("wid"): m.group(0) for m in ROW.finditer(page)}
    assert wid in rows, f"no row of {wid} in {username}'s inbox"
    return rows[wid]


def test_the_finance_row_shows_the_department_receipts_and_who_approved_before(
    acme: Any, api: Any, files_root: Path
) -> None:
    wid = start_expense(api("alice"), 4_500_000, department="sales").json()["workflowId"]
    assert page_attach(signed_in("alice"), wid, upload("taxi.pdf", PDF)).status_code == 302
    assert decide(api("bob"), wid, "approve", "bob-ok").status_code == 200

    row = inbox_row("fiona", wid)

    assert '<span class="facts">Department: Sales</span>' in row
    assert '<span class="receipts">1 receipt</span>' in row
    assert '<span class="approved">Approved by Bob (Manager)</span>' in row


def test_the_first_approvers_row_says_no_receipt_and_names_nobody(acme: Any, api: Any) -> None:
    wid = start_expense(api("alice"), 4_500_000, department="sales").json()["workflowId"]
    row = inbox_row("bob", wid)
    assert '<span class="receipts">No receipt</span>' in row
    assert "Approved by" not in row


def test_approvals_before_a_resubmission_no_longer_count(acme: Any, api: Any) -> None:
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    assert decide(api("bob"), wid, "approve", "bob-1").status_code == 200
    assert "Approved by Bob (Manager)" in inbox_row("fiona", wid)
    asked = decide(api("fiona"), wid, "send_back", "fio-1", comment="Which project?")
    assert asked.json()["status"] == "PENDING_MANAGER"
    back = decide(api("bob"), wid, "reject", "bob-2", comment="Say which project")
    assert back.json()["status"] == "PENDING_SUBMITTER"  # back to alice
    again = decide(api("alice"), wid, "approve", "alice-1", data={"description": "Project X"})
    assert again.json()["status"] == "PENDING_MANAGER"
    assert "Approved by" not in inbox_row("bob", wid)


@pytest.mark.parametrize(
    ("approved", "said"),
    [
        ([], ""),
        ([("bob", "manager")], "Approved by Bob (Manager)"),
        ([("bob", "manager"), ("victor", "vp")], "Approved by Bob (Manager) and Victor (VP)"),
    ],
)
def test_approved_before_in_words(approved: list[tuple[str, str]], said: str) -> None:
    raw = {"steps": [{"id": "manager", "title": "Manager"}, {"id": "vp", "title": "VP"}]}
    assert present.approved_before(approved, {"bob": "Bob", "victor": "Victor"}, raw) == said


def test_only_fields_the_template_marks_show_on_the_row() -> None:
    schema = {
        "properties": {
            "department": {"type": "string", "title": "Department", "x-row": True},
            "vendor": {"type": "string", "title": "Vendor", "x-row": True},
            "notes": {"type": "string", "title": "Notes"},
        }
    }
    data = {"department": "Sales", "vendor": "Acme Taxis", "notes": "late flight"}
    assert present.row_facts(schema, data) == "Department: Sales · Vendor: Acme Taxis"
    assert present.row_facts(schema, {"notes": "x"}) == ""
