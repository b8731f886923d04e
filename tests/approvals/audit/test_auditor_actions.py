"""The auditor's actions where she reads: a request's page offers "Verify this request"
and "Export its history"; the export (of a request and of the whole organisation, from
her menu) carries each event's sentence beside its raw type; and each role's menu shows
only what that role can use."""

from __future__ import annotations

import csv
import io
import re

import pytest

from ..pages.support import expense_started, signed_in

pytestmark = pytest.mark.django_db

NAV = re.compile(r"<nav>(.*?)</nav>", re.S)
LINK_TEXT = re.compile(r">([^<>]+)</a>")


def menu(username: str) -> list[str]:
    page = signed_in(username).get("/search").content.decode()
    nav = NAV.search(page)
    assert nav is not None
    return [text.strip() for text in LINK_TEXT.findall(nav.group(1))]


def csv_rows(response) -> list[dict[str, str]]:
    body = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(body)))


def test_the_request_page_offers_the_auditor_verify_and_export_and_others_not(acme):
    wid = expense_started("E-audit-1")
    page = signed_in("audrey").get(f"/workflows/{wid}").content.decode()
    assert f'href="/audit/verify?scope=workflow&amp;workflow={wid}">Verify this request' in page
    assert f'href="/workflows/{wid}/history.csv" download>Export its history' in page

    for username in ("alice", "bob"):
        other = signed_in(username).get(f"/workflows/{wid}").content.decode()
        assert "Verify this request" not in other and "Export its history" not in other


def test_verify_this_request_checks_its_chain_and_says_so(acme):
    wid = expense_started("E-audit-2")
    page = signed_in("audrey").get(f"/audit/verify?scope=workflow&workflow={wid}")
    assert page.status_code == 200
    assert "All 1 request verify" in page.content.decode()


def test_a_requests_history_export_carries_each_events_sentence_beside_its_type(acme):
    wid = expense_started("E-audit-3")
    response = signed_in("audrey").get(f"/workflows/{wid}/history.csv")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = csv_rows(response)
    assert {r["workflow_id"] for r in rows} == {wid}
    first = rows[0]
    assert first["type"] == "WorkflowStarted"
    assert "Alice" in first["sentence"]
    asked = next(r for r in rows if r["type"] == "ApprovalRequested")
    assert "Bob" in asked["sentence"] and "Manager" in asked["sentence"]
    assert all(r["sentence"] for r in rows)
    assert list(rows[0])[2:4] == ["type", "sentence"]


def test_a_requests_history_is_the_auditors_alone_and_of_her_organisation(acme):
    wid = expense_started("E-audit-4")
    assert signed_in("bob").get(f"/workflows/{wid}/history.csv").status_code == 403
    assert signed_in("alice").get("/audit/export").status_code == 403
    missing = "00000000-0000-0000-0000-000000000000"
    assert signed_in("audrey").get(f"/workflows/{missing}/history.csv").status_code == 404


def test_the_export_page_of_the_auditors_menu_streams_the_sentences(acme):
    expense_started("E-audit-5")
    audrey = signed_in("audrey")
    form = audrey.get("/audit/export")
    assert form.status_code == 200 and "Export the audit trail" in form.content.decode()

    response = audrey.get("/audit/export", {"format": "csv", "subject": "E-audit-5"})
    rows = csv_rows(response)
    assert rows and all(r["subject_id"] == "E-audit-5" and r["sentence"] for r in rows)


def test_a_bad_export_filter_is_refused_in_words_and_downloads_nothing(acme):
    bad = signed_in("audrey").get("/audit/export", {"format": "xlsx", "since": "yesterday"})
    assert bad.status_code == 400
    text = bad.content.decode()
    assert "Select a valid choice" in text and "Enter a valid date/time" in text
    assert "Content-Disposition" not in bad


@pytest.mark.parametrize(
    ("username", "shown", "hidden"),
    [
        (
            "audrey",
            {"Search", "Settings", "Verify", "Export", "Analytics"},
            {"Inbox", "My requests", "New request", "Out of office", "Administration"},
        ),
        (
            "alice",
            {"Inbox", "My requests", "New request", "Search", "Out of office", "Settings"},
            {"Verify", "Export", "Administration", "Analytics"},
        ),
        (
            "olga",
            {"Inbox", "My requests", "Out of office", "Administration", "Verify", "Export"},
            set(),
        ),
        ("fiona", {"Inbox", "Administration", "Analytics"}, {"Verify", "Export"}),
    ],
)
def test_each_roles_menu_shows_only_what_it_can_use(acme, username, shown, hidden):
    links = set(menu(username))
    assert shown <= links, links
    assert not hidden & links, links
