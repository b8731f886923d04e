"""The analytics read model against the events: the figures the page shows equal
those computed straight from the event table for generated histories (hypothesis),
and the read model is what ``rebuild_read_models`` makes of the events."""

from __future__ import annotations

import datetime as dt
from io import StringIO
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals import clock
from approvals.models import StepDay, StepVisit, User, Workflow
from approvals.runtime import rollup, rollup_buckets
from approvals.runtime.rebuild import read_models_check, read_models_of
from approvals.selectors.analytics import AnalyticsFilter, step_figures, weekly_starts
from approvals.services.workflows import workflow_cancel
from approvals.workers.timers import timer_drain

from ...properties import examples
from . import oracle
from .support import act, later, travel_published, travel_started

pytestmark = pytest.mark.django_db

ACTIONS = st.lists(
    st.sampled_from(["approve", "reject", "send_back", "wait", "cancel"]), max_size=7
)
HISTORIES = st.lists(
    st.tuples(st.sampled_from(["SALES", "IT_OPS"]), ACTIONS), min_size=1, max_size=3
)


@pytest.fixture
def travel(acme: Any) -> Any:
    travel_published(acme)
    return acme


def _play(department: str, actions: list[str]) -> None:
    wid = travel_started(department=department)
    for action in actions:
        if Workflow.objects.get(pk=wid).status != "RUNNING":
            return
        if action == "wait":
            later(30)  # past the lead's one-day deadline: it escalates
            timer_drain()
        elif action == "cancel":
            workflow_cancel(
                user=User.objects.get(username="olga"),
                workflow_id=wid,
                reason="not needed",
                request_id=f"c-{wid}",
            )
        else:
            later(2)
            try:
                act(wid, action)
            except Exception:  # noqa: BLE001 - a refused decision changes nothing
                continue


def _whole_time(tenant_id: int, **extra: Any) -> AnalyticsFilter:
    far = dt.timedelta(days=3650)
    now = clock.now()
    return AnalyticsFilter(tenant_id=tenant_id, start=now - far, end=now + far, **extra)


def _read_model(f: AnalyticsFilter, now: dt.datetime) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {
        (r.template_key, r.step): (
            r.visits,
            r.completed,
            r.rejected,
            r.sent_back,
            r.breached,
            r.escalated,
            r.waiting,
        )
        for r in step_figures(f, now=now)
    }


def _within_the_bucket_error(
    f: AnalyticsFilter, now: dt.datetime, visits: list[dict[str, Any]]
) -> None:
    """The page's median and 90th percentile against the exact ones (percentile_cont)
    from the events: within 5%, or half a minute (waits under a minute)."""
    for r in step_figures(f, now=now):
        waits = [
            (v["left_at"] - v["entered_at"]).total_seconds()
            for v in visits
            if v["left_at"] and (v["template_key"], v["step"]) == (r.template_key, r.step)
        ]
        for got, fraction in ((r.median, 0.5), (r.p90, 0.9)):
            exact = oracle.percentile(waits, fraction)
            if exact is None:
                assert got is None
                continue
            assert got is not None
            seconds = got.total_seconds()
            assert abs(seconds - exact) <= 0.05 * exact + 30.001, (r.step, seconds, exact)
    assert rollup_buckets.ERROR < 0.05


@settings(
    max_examples=examples(10, most=30),  # each plays workflows through the database
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(histories=HISTORIES)
def test_the_figures_equal_those_computed_from_the_events(travel: Any, histories: Any) -> None:
    # given: histories played through the command path (examples add to one another)
    for department, actions in histories:
        _play(department, actions)
    now = clock.now()
    visits = oracle.visits_from_events(travel.pk)

    # then: per step, and per department, the counts exact
    def counts(vs: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[Any, ...]]:
        return {k: v[:7] for k, v in oracle.figures(vs, now).items()}

    everything = _whole_time(travel.pk)
    assert _read_model(everything, now) == counts(visits)
    sales = [v for v in visits if v["data"].get("department") == "SALES"]
    only_sales = _whole_time(travel.pk, template_key="travel", field="department", value="SALES")
    assert _read_model(only_sales, now) == counts(sales)
    # and the times waited within the rollup's bucket error
    _within_the_bucket_error(everything, now, visits)
    _within_the_bucket_error(only_sales, now, sales)
    # and the requests started each week
    weeks: dict[dt.date, int] = {}
    for v in visits:
        if v["first"]:
            monday = v["entered_at"].date() - dt.timedelta(days=v["entered_at"].weekday())
            weeks[monday] = weeks.get(monday, 0) + 1
    got = weekly_starts(_whole_time(travel.pk), zone=dt.UTC)
    assert {m: n for m, _, n in got} == weeks
    # and a period that starts at midnight in India, mid-day in UTC: its part-days at
    # the ends come from the visits, the rest from the rollup; weeks from Monday in India
    _periods_in_india(travel.pk, now, visits)


def _periods_in_india(tenant_id: int, now: dt.datetime, visits: list[dict[str, Any]]) -> None:
    india = ZoneInfo("Asia/Kolkata")
    middle = sorted(v["entered_at"] for v in visits)[len(visits) // 2].astimezone(india)
    cut = dt.datetime.combine(middle.date(), dt.time(), tzinfo=india)
    far = dt.timedelta(days=3650)
    for start, end in ((cut, now + far), (now - far, cut), (cut - dt.timedelta(days=3), cut)):
        f = AnalyticsFilter(tenant_id=tenant_id, start=start, end=end)
        inside = [v for v in visits if start <= v["entered_at"] < end]
        assert _read_model(f, now) == {k: v[:7] for k, v in oracle.figures(inside, now).items()}
        _within_the_bucket_error(f, now, inside)
        weeks: dict[dt.date, int] = {}
        for v in inside:
            if v["first"]:
                local = v["entered_at"].astimezone(india).date()
                monday = local - dt.timedelta(days=local.weekday())
                weeks[monday] = weeks.get(monday, 0) + 1
        assert {m: n for m, _, n in weekly_starts(f, zone=india)} == weeks


def test_the_read_model_is_what_a_rebuild_makes_of_the_events(travel: Any) -> None:
    _play("SALES", ["approve", "send_back", "approve", "approve"])
    _play("IT_OPS", ["wait", "reject", "approve", "approve", "approve"])
    _play("SALES", ["approve", "cancel"])
    _play("IT_OPS", ["wait"])
    live = read_models_of(tenant_id=travel.pk)
    assert live["visits"], "the histories made visits"
    counted = rollup.rollup_rows(tenant_id=travel.pk)
    assert sum(r[5] for r in counted) == len(live["visits"]), "each visit counted once"
    assert {v[1][7] for v in live["visits"]} >= {"completed", "sent_back", "rejected", "cancelled"}
    assert read_models_check(tenant_id=travel.pk) == []

    StepVisit.objects.all().delete()
    assert read_models_of(tenant_id=travel.pk).get("visits", set()) != live["visits"]
    assert rollup.rollup_rows(tenant_id=travel.pk) == set(), "the trigger took them away"
    StepDay.objects.create(
        tenant_id=travel.pk,
        template_key="travel",
        step="lead",
        kind="approval",
        day=dt.date(2020, 1, 1),
        waits=[5],
        firsts=[5],
        visits=5,
    )  # a stray row: the rebuild recounts the rollup from the visits
    # the clock moved days ahead: seal the histories, as the daily job would have
    call_command("seal_audit", stdout=StringIO())
    call_command("rebuild_read_models", "--tenant", "acme", stdout=StringIO())

    assert read_models_of(tenant_id=travel.pk)["visits"] == live["visits"]
    assert rollup.rollup_rows(tenant_id=travel.pk) == counted


def test_an_escalation_and_a_breach_are_counted(travel: Any) -> None:
    wid = travel_started(department="SALES")
    later(30)
    timer_drain()
    visit = StepVisit.objects.get(workflow_id=wid, entry=1)
    assert visit.escalated and visit.left_at is None
    rows = {r.step: r for r in step_figures(_whole_time(travel.pk), now=clock.now())}
    assert rows["lead"].breached == 1 and rows["lead"].escalated == 1 and rows["lead"].waiting == 1
