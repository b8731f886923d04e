"""The search on SQLite (``make run``): no full-text index there, so each word is a plain
case-insensitive match of the reference, the summary and the strings of the data (not
its keys); the amount range, decided by, the orders and the CSV export work as on
PostgreSQL. Run in a subprocess with its own settings, as test_embedded_sqlite does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
from django.db import connection
from django.test import RequestFactory
from approvals.models import User
from approvals.services.workflows import workflow_decide, workflow_start
from approvals.web.search import WorkflowSearch
from approvals.web.search_results import search_csv
import datetime as dt

assert connection.vendor == "sqlite"
alice, bob, audrey = (User.objects.get(username=u) for u in ("alice", "bob", "audrey"))
def claim(ref, text, amount):
    data = {"amountPaise": amount, "currency": "INR", "department": "eng", "description": text}
    return workflow_start(submitter=alice, template_key="expense-approval",
                          subject_type="expense", subject_id=ref, data=data).workflow_id
hotel = claim("TRIP-1", "Hotel in Pune for the offsite", 4_500_000)
taxi = claim("TAXI-2", "Taxi to the airport", 9_000_000)
workflow_decide(user=bob, workflow_id=taxi, decision="approve", request_id="b1")

def found(**params):
    request = RequestFactory().get("/search")
    request.user = audrey
    search = WorkflowSearch({k: str(v) for k, v in params.items()}, request=request)
    assert search.is_valid(), search.errors
    return [w.subject_id for w in search.results()]

print("HOTEL", found(text="hotel"))
print("MIDWORD", found(text="OTEL pune"))
print("KEY", found(text="description"))
print("NAME", found(text="alice airport"))
print("AMOUNT", found(amountMin="10,000", amountMax="50000"))
print("DECIDED", found(decidedBy="bob"))
print("SORTED", found(sort="amount"))
request = RequestFactory().get("/search")
request.user = audrey
search = WorkflowSearch({"text": "hotel"}, request=request)
assert search.is_valid()
print("CSV", repr("".join(search_csv(search, zone=dt.timezone.utc))))
"""


SAID = re.compile(r"\b(HOTEL|MIDWORD|KEY|NAME|AMOUNT|DECIDED|SORTED|CSV) (.*)$", re.MULTILINE)


def test_search_falls_back_to_a_plain_match_on_sqlite(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env["DEBUG"] = "true"
    manage = [sys.executable, str(ROOT / "manage.py")]

    for args in (["migrate", "-v0"], ["seed_demo"], ["shell", "-c", SCRIPT]):
        done = subprocess.run(
            [*manage, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr[-3000:]

    # Each answer is found wherever it stands on its line: a log line written to the
    # same stdout without its own line end must not hide it.
    said = dict(SAID.findall(done.stdout))
    assert set(said) == {"HOTEL", "MIDWORD", "KEY", "NAME", "AMOUNT", "DECIDED", "SORTED", "CSV"}, (
        done.stdout[-3000:]
    )
    assert said["HOTEL"] == "['TRIP-1']"
    assert said["MIDWORD"] == "['TRIP-1']"  # a plain match finds a word's middle too
    assert said["KEY"] == "[]"  # the data's keys are not its text
    assert said["NAME"] == "['TAXI-2']"
    assert said["AMOUNT"] == "['TRIP-1']"
    assert said["DECIDED"] == "['TAXI-2']"
    assert said["SORTED"] == "['TAXI-2', 'TRIP-1']"
    assert said["CSV"].startswith("'Reference,Summary,Amount,Status,Submitted by,Started,")
    assert 'TRIP-1,"Hotel in Pune for the offsite, ₹45,000.00","₹45,000.00"' in said["CSV"]
