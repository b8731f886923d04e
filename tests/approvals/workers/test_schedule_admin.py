"""Start schedules in the admin: finance admins of an organisation create and change
their own; the next start is planned on save, and every bad input is a form error
that saves nothing."""

from __future__ import annotations

import datetime as dt
import html
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from approvals import clock
from approvals.admin.registry import SCHEDULE_TEMPLATE_UNKNOWN
from approvals.models import StartSchedule, Tenant, User
from approvals.services.schedules import schedule_cron
from approvals.services.templates import workflow_template_publish

ADD = "/admin/approvals/startschedule/add/"
REVIEW = {
    "key": "access-review",
    "title": "Access review",
    "steps": [{"id": "it", "kind": "approval", "approvers": [{"user": "ivan"}]}],
}
SHOTS = Path("/tmp/shots-ten")


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _form(**changes: Any) -> dict[str, Any]:
    form = {
        "name": "Quarterly access review",
        "template_key": "access-review",
        "subject_type": "access-review",
        "subject_id": "{due}",
        "data": '{"scope": "all systems"}',
        # the schedule's maker: see test_schedule_submitter
        "submitter": User.objects.get(username="fiona").pk,
        "cron": "0 9 1 1,4,7,10 *",
        "timezone": "Asia/Kolkata",
        "enabled": "on",
    }
    form.update(changes)
    return form


@pytest.mark.django_db
def test_a_finance_admin_creates_a_schedule_and_its_next_start_is_planned(acme):
    workflow_template_publish(tenant=acme, definition=REVIEW)

    response = _client("fiona").post(ADD, _form())

    assert response.status_code == 302, response.content
    schedule = StartSchedule.objects.get()
    assert schedule.tenant == acme
    assert schedule.data == {"scope": "all systems"}
    assert schedule.enabled
    assert schedule.next_due_at is not None
    assert clock.now() < schedule.next_due_at <= clock.now() + dt.timedelta(days=93)
    local = schedule.next_due_at.astimezone(schedule_cron(schedule).zone)
    assert (local.day, local.hour, local.minute, local.month % 3) == (1, 9, 0, 1)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        pytest.param({"cron": "0 9 * *"}, "cron", "Give five fields", id="cron-fields"),
        pytest.param({"cron": "0 25 * * *"}, "cron", "25 > 23", id="cron-hour"),
        pytest.param({"cron": "-1 * * * *"}, "cron", "negative numbers", id="cron-negative"),
        pytest.param({"timezone": "Mars/Olympus"}, "timezone", "No time zone", id="zone"),
        pytest.param({"data": "[1, 2]"}, "data", "JSON object", id="data-list"),
        pytest.param({"data": "{oops"}, "data", "JSON", id="data-not-json"),
        pytest.param({"name": ""}, "name", "required", id="no-name"),
    ],
)
def test_bad_input_is_a_form_error_and_saves_nothing(acme, changes, field, message):
    workflow_template_publish(tenant=acme, definition=REVIEW)

    response = _client("fiona").post(ADD, _form(**changes))

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert message in " ".join(errors[field])
    assert not StartSchedule.objects.exists()


@pytest.mark.django_db
def test_a_schedule_for_an_unknown_template_is_saved_disabled_saying_why(acme):
    response = _client("fiona").post(ADD, _form(template_key="no-such-template"), follow=True)

    message = SCHEDULE_TEMPLATE_UNKNOWN.format(key="no-such-template")
    assert html.escape(message) in response.content.decode()
    assert StartSchedule.objects.get().enabled is False


@pytest.mark.django_db
def test_another_organisations_schedules_are_not_shown(acme):
    globex = Tenant.objects.create(slug="globex", name="Globex")
    gina = User.objects.create_user("gina", password="pw", tenant=globex)
    theirs = StartSchedule.objects.create(
        tenant=globex, name="Globex review", template_key="x", subject_type="x",
        submitter=gina, cron="0 9 * * *", timezone="UTC",
    )  # fmt: skip
    client = _client("fiona")

    assert b"Globex review" not in client.get("/admin/approvals/startschedule/").content
    change = client.get(f"/admin/approvals/startschedule/{theirs.pk}/change/")
    assert change.status_code in (302, 404)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_schedule_screens_in_a_browser(acme, live_server, browser):
    workflow_template_publish(tenant=acme, definition=REVIEW)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "fiona")
    page.fill("#id_password", "demo")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}{ADD}")
    page.fill("#id_name", "Quarterly access review")
    page.fill("#id_template_key", "access-review")
    page.fill("#id_subject_type", "access-review")
    page.fill("#id_data", '{"scope": "all systems"}')
    page.select_option("#id_submitter", label="fiona")
    page.fill("#id_cron", "0 9 1 1,4,7,10 *")
    page.screenshot(path=str(SHOTS / "schedule-add.png"), full_page=True)
    page.click("input[name=_save]")
    page.screenshot(path=str(SHOTS / "schedule-list.png"), full_page=True)

    assert "Quarterly access review" in page.content()
    assert "Not scheduled" not in page.content()
    assert StartSchedule.objects.get().next_due_at is not None
