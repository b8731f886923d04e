"""Try it: the in-memory run of a definition against the organisation's directory
shows who is asked (after delegations and segregation of duties), reminders,
deadlines and escalations on a time line, and writes nothing."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.apps import apps

from approvals import clock
from approvals.models import Delegation, Tenant, User, WorkflowTemplate
from approvals.selectors.template_trial import workflow_template_try
from templates_engine.state import STATUSES

from ..helpers import EXPENSE

pytestmark = pytest.mark.django_db

DAY = 86400.0
DATA = {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"}


def _row_counts() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()}


def _try(acme: Tenant, submitter: str, data: dict[str, Any] = DATA) -> Any:
    template = WorkflowTemplate.objects.get(tenant=acme, key=EXPENSE, version=1)
    return workflow_template_try(
        tenant_id=acme.pk,
        definition=template.definition,
        data=data,
        submitter=User.objects.get(username=submitter),
    )


def test_the_time_line_of_an_expense_nobody_hurries(acme: Tenant) -> None:
    trial = _try(acme, "alice")

    moments = [(e.at / DAY, e.step, e.kind, e.people) for e in trial.entries]
    assert moments[:5] == [
        (0, "", "started", ("alice",)),
        (0, "manager", "asked", ("bob",)),
        (1, "manager", "reminder", ("bob",)),
        (2, "manager", "escalated", ("victor",)),
        (2, "manager", "approved", ("victor",)),
    ]
    assert (2, "vp", "skipped", ()) in moments
    assert moments[-1][2:] == ("finished", ())
    assert trial.status == "COMPLETED"


def test_delegations_and_segregation_of_duties_are_applied(acme: Tenant) -> None:
    victor, ivan = (User.objects.get(username=u) for u in ("victor", "ivan"))
    away = clock.now() - dt.timedelta(days=1), clock.now() + dt.timedelta(days=30)
    Delegation.objects.create(
        tenant=acme, user=victor, delegate=ivan, starts_at=away[0], ends_at=away[1]
    )

    trial = _try(acme, "fiona")  # fiona is in finance: she may not approve her own

    asked = {e.step: e.people for e in trial.entries if e.kind == "asked"}
    assert asked["manager"] == ("ivan (for victor)",)
    excluded = [e for e in trial.entries if e.kind == "excluded" and e.step == "finance"]
    assert "fiona" in excluded[0].people
    assert asked["finance"] == ("farah",)


def test_data_that_does_not_fit_the_schema_is_reported_not_run(acme: Tenant) -> None:
    trial = _try(acme, "alice", {"amountPaise": "lots"})

    assert trial.entries == []
    assert any("amountPaise" in p for p in trial.problems)


def test_nothing_is_written(acme: Tenant) -> None:
    before = _row_counts()

    _try(acme, "alice")

    assert _row_counts() == before


@pytest.mark.parametrize("status", sorted(STATUSES))
def test_a_run_ends_in_words_never_in_a_status_name(status: str) -> None:
    from approvals.web.template_trial_words import trial_end

    words = trial_end(status)

    assert "_" not in words and status not in words  # "rolled_back", "ROLLED_BACK"
