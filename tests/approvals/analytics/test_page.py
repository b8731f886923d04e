"""The analytics page: who may see it, what it shows (in words, in the person's time
zone, one organisation only), the CSV downloads, and bad filters refused in a
sentence."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest

from approvals import access
from approvals.models import Tenant, User
from approvals.pages import analytics as page
from approvals.services.templates import workflow_template_publish
from approvals.services.workflows import workflow_start

from ..pages.support import signed_in
from .support import act, later, travel_published, travel_started

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(acme: Any) -> Any:
    travel_published(acme)
    first = travel_started(department="SALES")
    later(5)
    act(first, "approve")  # the lead approves after 5 hours
    later(50)
    second = travel_started(department="IT_OPS")
    act(second, "reject")  # back to alice for changes
    later(1)
    act(first, "approve")  # the travel desk, 51 hours after it was asked
    return acme


@pytest.mark.parametrize("who", ["fiona", "olga", "audrey"])
def test_finance_admins_organisation_admins_and_auditors_see_it(history: Any, who: str) -> None:
    response = signed_in(who).get("/analytics")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'href="/analytics"' in body  # the navigation offers it
    assert "Travel request" in body and "Team lead" in body and "Travel desk" in body
    # median waits, in words, within 5% of 2 hours 30 minutes and of 2 days 3 hours
    assert re.search(r"<td>2 hours (2[3-9]|3[0-8]) minutes</td>", body)
    assert re.search(r"<td>2 days [0-5] hours?</td>", body)
    assert "rounded to within 5%" in body
    assert "Back with the submitter for changes" in body
    assert "<svg" in body and "<script" not in body.split("<main")[1]


def test_an_employee_is_refused_in_words(history: Any) -> None:
    client = signed_in("alice")
    response = client.get("/analytics")
    assert response.status_code == 403
    assert access.FORBIDDEN_ANALYTICS in response.content.decode()
    assert 'href="/analytics"' not in client.get("/").content.decode()
    assert client.get("/analytics?download=steps").status_code == 403


def test_another_organisations_requests_never_show(history: Any) -> None:
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gina = User.objects.create_user("gina", password="pw", tenant=globex)
    workflow_template_publish(
        tenant=globex,
        definition={
            "key": "travel",
            "title": "Globex secret trips",
            "steps": [{"id": "vault", "title": "Globex vault", "kind": "signal", "signal": "x"}],
        },
    )
    workflow_start(
        submitter=gina, template_key="travel", subject_type="t", subject_id="G-1", data={}
    )
    client = signed_in("audrey")
    for url in ("/analytics", "/analytics?template=travel", "/analytics?download=steps"):
        body = client.get(url).content.decode()
        assert "Globex" not in body and "vault" not in body.lower()
    assert "Travel desk" in client.get("/analytics?template=travel").content.decode()


def test_the_department_filter_counts_only_its_requests(history: Any) -> None:
    client = signed_in("fiona")
    sales = client.get("/analytics?template=travel&where=department%3DSALES")
    assert sales.status_code == 200
    body = sales.content.decode()
    assert "Department is Sales" in body  # the choice, in words
    assert "Back with the submitter for changes" not in body  # that was IT ops' request
    rows = _csv(client.get("/analytics?where=department%3DSALES&download=steps"))
    assert {r["Step"]: r["Visits"] for r in rows} == {"Team lead": "1", "Travel desk": "1"}


def test_each_table_downloads_as_csv_in_words(history: Any) -> None:
    client = signed_in("olga")
    steps = _csv(client.get("/analytics?download=steps"))
    lead = next(r for r in steps if r["Step"] == "Team lead")
    assert lead["Kind of request"] == "Travel request"
    assert lead["Approved"] == "50%" and lead["Rejected"] == "50%"
    assert re.fullmatch(r"2 hours (2[3-9]|3[0-8]) minutes", lead["Median wait"])
    weeks = _csv(client.get("/analytics?download=weeks"))
    assert sum(int(r["Requests started"]) for r in weeks) == 2
    waiting = _csv(client.get("/analytics?download=waiting"))
    assert [r["Step"] for r in waiting] == ["Back with the submitter for changes"]


def test_a_cell_that_would_be_a_formula_is_quoted(acme: Any) -> None:
    definition = {
        "key": "formula",
        "title": '=HYPERLINK("http://evil")',
        "steps": [{"id": "one", "kind": "approval", "approvers": [{"user": "bob"}]}],
    }
    workflow_template_publish(tenant=acme, definition=definition)
    workflow_start(
        submitter=User.objects.get(username="alice"),
        template_key="formula",
        subject_type="t",
        subject_id="F-1",
        data={},
    )
    rows = _csv(signed_in("audrey").get("/analytics?download=steps"))
    assert rows[0]["Kind of request"].startswith("'=")


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("start=yesterday", page.BAD_DATE),
        ("start=2026-02-30", page.BAD_DATE),
        ("start=2026-11-30&end=2026-11-01", page.PERIOD_BACKWARDS),
        ("start=2020-01-01&end=2026-11-01", page.PERIOD_TOO_LONG),
        ("template=nope", page.UNKNOWN_KIND),
        ("where=department%3DMARKETING", page.UNKNOWN_WHERE),
        ("where=amountPaise%3D1", page.UNKNOWN_WHERE),
        ("download=everything", page.UNKNOWN_DOWNLOAD),
    ],
)
def test_a_bad_filter_gets_a_sentence(history: Any, query: str, message: str) -> None:
    response = signed_in("fiona").get(f"/analytics?{query}")
    assert response.status_code == 400
    body = response.content.decode()
    assert message.replace("“", "&ldquo;") in body or message in body
    assert "<svg" not in body


def test_times_are_in_the_persons_zone(history: Any) -> None:
    body = signed_in("audrey", tz_cookie="Asia/Kolkata").get("/analytics").content.decode()
    assert " IST" in body


def _csv(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))
