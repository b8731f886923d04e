"""A schedule files its requests in the name of the person who made it, never in anyone
else's: the history of a scheduled start names the schedule and its maker, and the
maker, being the submitter, holds and decides none of its steps."""

from __future__ import annotations

import datetime as dt
import html
from typing import Any

import pytest
from django.test import Client

from approvals import clock
from approvals.admin.registry import SCHEDULE_SUBMITTER_NOT_MAKER
from approvals.models import PendingTask, StartSchedule, User, Workflow, WorkflowEvent
from approvals.services.schedules import (
    SCHEDULE_NO_OWNER,
    SCHEDULE_NOT_OWNERS,
    schedule_plan,
    schedules_start_due,
)

from ..helpers import decide

ADD = "/admin/approvals/startschedule/add/"
DAILY = "0 9 * * *"


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _form(**changes: Any) -> dict[str, Any]:
    form = {
        "name": "Monthly cloud bill",
        "template_key": "expense-approval",
        "subject_type": "expense",
        "subject_id": "cloud-{due}",
        "data": '{"amountPaise": 500000, "currency": "INR", "department": "eng"}',
        "cron": DAILY,
        "timezone": "Asia/Kolkata",
        "enabled": "on",
    }
    form.update(changes)
    return form


def _run_due(schedule: StartSchedule) -> list[Any]:
    assert schedule.next_due_at is not None
    with clock.shifted(schedule.next_due_at + dt.timedelta(seconds=5) - clock.now()):
        return schedules_start_due()


@pytest.mark.django_db
def test_a_finance_admin_cannot_make_a_schedule_that_files_requests_as_someone_else(acme):
    victor = User.objects.get(username="victor")

    response = _client("fiona").post(ADD, _form(submitter=victor.pk))

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert SCHEDULE_SUBMITTER_NOT_MAKER.format(name="Victor") in errors["submitter"]
    assert html.escape(SCHEDULE_SUBMITTER_NOT_MAKER.format(name="Victor")) in (
        response.content.decode()
    )
    assert not StartSchedule.objects.exists()


@pytest.mark.django_db
def test_a_scheduled_request_is_its_makers_and_she_may_not_decide_any_of_its_steps(acme, api):
    # given: Fiona (a finance approver) makes a schedule of expenses
    response = _client("fiona").post(ADD, _form())
    assert response.status_code == 302, response.content
    schedule = StartSchedule.objects.get()
    fiona = User.objects.get(username="fiona")
    assert (schedule.owner, schedule.submitter) == (fiona, fiona)

    # when its period comes
    [run] = _run_due(schedule)

    # then the request is hers, and its history says which schedule made it
    wf = Workflow.objects.get(pk=run.workflow_id)
    assert wf.submitter == fiona
    started = WorkflowEvent.objects.get(workflow=wf, seq=1)
    assert started.payload["origin"] == {
        "schedule": schedule.pk,
        "name": "Monthly cloud bill",
        "made_by": "fiona",
    }
    page = _client("fiona").get(f"/workflows/{wf.pk}").content.decode()
    assert html.escape("Started by the schedule 'Monthly cloud bill' made by Fiona") in page

    # and when her manager approves, the finance step goes to Farah, not to her
    assert decide(api("victor"), str(wf.pk), "approve", "r-1").status_code == 200
    holders = set(
        PendingTask.objects.filter(workflow=wf).values_list("assignee__username", flat=True)
    )
    assert holders == {"farah"}
    # she holds no task on it: not her step (segregation of duties kept it from her)
    refused = decide(api("fiona"), str(wf.pk), "approve", "r-2")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "NOT_YOUR_STEP"
    assert "waiting for the Finance step" in refused.json()["error"]["message"]
    assert not WorkflowEvent.objects.filter(workflow=wf, request_id="r-2").exists()


def _stored(acme: Any, *, submitter: str, owner: str | None) -> StartSchedule:
    schedule = StartSchedule(
        tenant=acme,
        name="Monthly cloud bill",
        template_key="expense-approval",
        subject_type="expense",
        subject_id="cloud-{due}",
        data={"amountPaise": 500000, "currency": "INR", "department": "eng"},
        submitter=User.objects.get(username=submitter),
        owner=User.objects.get(username=owner) if owner else None,
        cron=DAILY,
        timezone="Asia/Kolkata",
    )
    schedule_plan(schedule=schedule)
    schedule.save()
    return schedule


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("owner", "message"),
    [
        pytest.param("fiona", SCHEDULE_NOT_OWNERS.format(owner="Fiona"), id="made-by-another"),
        pytest.param(None, SCHEDULE_NO_OWNER, id="made-by-nobody-known"),
    ],
)
def test_a_schedule_naming_someone_other_than_its_maker_files_nothing(acme, owner, message):
    # given: a row that names Victor, made by Fiona (or from before makers were kept)
    schedule = _stored(acme, submitter="victor", owner=owner)

    # when
    [run] = _run_due(schedule)

    # then
    assert run.workflow_id is None and run.error == message
    assert not Workflow.objects.exists()
    schedule.refresh_from_db()
    assert schedule.last_error == message


@pytest.mark.django_db
def test_whoever_changes_a_schedule_answers_for_it_and_files_its_requests(acme):
    # given: Fiona's schedule, changed by another finance admin
    schedule = _stored(acme, submitter="fiona", owner="fiona")
    farah = User.objects.get(username="farah")
    farah.groups.add(*User.objects.get(username="fiona").groups.all())
    change = f"/admin/approvals/startschedule/{schedule.pk}/change/"

    # when
    response = _client("farah").post(change, _form(name="Cloud bill", submitter=farah.pk))

    # then
    assert response.status_code == 302, response.content
    schedule.refresh_from_db()
    assert (schedule.owner, schedule.submitter, schedule.name) == (farah, farah, "Cloud bill")
