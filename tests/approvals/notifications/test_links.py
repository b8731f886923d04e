"""One-click links: a GET only shows the confirmation page, the POST records one
decision as the link's person; every refusal is a clear page that records nothing."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from approvals.models import Department, User, Workflow, WorkflowEvent
from approvals.notifications.bodies import mail_bodies
from approvals.notifications.models import LinkUse, MailMessage
from approvals.notifications.views import COMMENT_NUL

from ..helpers import decide, start_expense

LINK = re.compile(
    r"^(Approve|Reject \(ends the request\)|Send back to \w+): http://127\.0\.0\.1:8000(/mail/links/\S+)$",
    re.M,
)


def links_for(wid: str, username: str) -> dict[str, str]:
    """The mail's two links by decision; their captions name what they do."""
    row = MailMessage.objects.filter(workflow_id=wid, recipient__username=username).latest("pk")
    found = dict(LINK.findall(mail_bodies(row)[0]))
    rejection = found.get("Reject (ends the request)") or found["Send back to Alice"]
    return {"approve": found["Approve"], "reject": rejection}


def captions_for(wid: str, username: str) -> list[str]:
    row = MailMessage.objects.filter(workflow_id=wid, recipient__username=username).latest("pk")
    return [caption for caption, _ in LINK.findall(mail_bodies(row)[0])]


def version(wid: str) -> int:
    return Workflow.objects.get(pk=wid).version


def decisions(wid: str) -> list[tuple[str, str]]:
    rows = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded")
    return [(r.payload["actor"], r.payload["decision"]) for r in rows.order_by("seq")]


@pytest.fixture
def waiting(acme: Any, api: Any) -> tuple[str, dict[str, str]]:
    """An expense of alice's waiting for bob, and bob's two links."""
    Department.objects.create(tenant=acme, key="skunkworks-7", name="Skunkworks")
    wid = start_expense(api("alice"), 4_500_000, department="skunkworks-7").json()["workflowId"]
    return wid, links_for(wid, "bob")


def assert_refused(response: Any, status: int, text: str, wid: str, before: int) -> None:
    assert response.status_code == status, response.content[:400]
    assert text in response.content.decode()
    assert version(wid) == before
    assert not LinkUse.objects.exists()


@pytest.mark.django_db
class TestLinks:
    def test_get_only_shows_the_summary_and_records_nothing(self, waiting, client):
        wid, links = waiting
        before = version(wid)

        page = client.get(links["approve"])

        assert page.status_code == 200
        html = page.content.decode()
        for shown in ("Approve this request?", "Expense claim", "₹45,000.00", "Alice", "Manager"):
            assert shown in html
        assert "csrfmiddlewaretoken" in html
        assert "skunkworks-7" not in html  # the data beyond the summary stays out
        assert version(wid) == before and decisions(wid) == []
        assert not LinkUse.objects.exists()

    def test_a_confirmed_link_records_one_decision_as_its_person(self, waiting):
        wid, links = waiting
        client = Client(enforce_csrf_checks=True)
        page = client.get(links["approve"])
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
        assert token is not None

        done = client.post(
            links["approve"], {"comment": "Fine", "csrfmiddlewaretoken": token.group(1)}
        )

        assert done.status_code == 200, done.content[:400]
        assert "You approved Expense claim ₹45,000.00 from Alice" in done.content.decode()
        assert decisions(wid) == [("bob", "approve")]
        event = WorkflowEvent.objects.get(workflow_id=wid, type="DecisionRecorded")
        assert event.payload["comment"] == "Fine"
        assert event.actor == User.objects.get(username="bob")
        assert Workflow.objects.get(pk=wid).current_step == "finance"
        use = LinkUse.objects.get()
        assert (use.user.username, use.decision) == ("bob", "approve")

    def test_the_reject_link_rejects(self, waiting, client):
        wid, links = waiting
        assert client.post(links["reject"], {"comment": "no receipt"}).status_code == 200
        assert decisions(wid) == [("bob", "reject")]
        # the demo's manager rejection goes back to the submitter
        assert Workflow.objects.get(pk=wid).public_status == "PENDING_SUBMITTER"

    def test_a_rejection_that_goes_back_is_named_so_in_the_mail_and_its_pages(
        self, waiting, client
    ):
        wid, links = waiting

        asked = client.get(links["reject"]).content.decode()
        done = client.post(links["reject"], {"comment": "no receipt"}).content.decode()

        assert captions_for(wid, "bob") == ["Approve", "Send back to Alice"]
        assert "Send this request back to Alice?" in asked
        assert "Confirm: Send back to Alice" in asked
        assert "back to Alice." in done and "rejected" not in done.lower()

    def test_a_post_without_the_csrf_token_is_refused(self, waiting):
        wid, links = waiting
        before = version(wid)
        answer = Client(enforce_csrf_checks=True).post(links["approve"], {"comment": "x"})
        assert answer.status_code == 403
        assert version(wid) == before and not LinkUse.objects.exists()

    def test_forged_and_tampered_links(self, waiting, client):
        wid, links = waiting
        before = version(wid)
        token = links["approve"].rsplit("/", 1)[1]
        value, _, signature = token.rpartition(":")
        flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
        body = value[:5] + ("x" if value[5] != "x" else "y") + value[6:]
        for bad in ("garbage", f"{value}:{flipped}", f"{body}:{signature}", "." + token):
            for method in (client.get, client.post):
                answer = method(f"/mail/links/{bad}")
                assert_refused(answer, 400, "not valid", wid, before)

    def test_an_expired_link(self, waiting, client, settings):
        wid, links = waiting
        before = version(wid)
        settings.APPROVALS_LINK_MAX_AGE_SECONDS = 1
        time.sleep(2.1)
        for method in (client.get, client.post):
            assert_refused(method(links["approve"]), 410, "expired", wid, before)

    def test_a_second_click_is_a_duplicate_that_says_the_decision_stands(self, waiting, client):
        wid, links = waiting
        assert client.post(links["approve"]).status_code == 200
        after = version(wid)

        for method in (client.post, client.get):
            again = method(links["approve"])
            assert again.status_code == 200
            html = again.content.decode()
            assert "Your approval of" in html and "was recorded on" in html
            assert "nothing more to do" in html
        assert version(wid) == after and decisions(wid) == [("bob", "approve")]

    def test_a_used_link_opened_by_someone_else_signed_in_is_still_refused(self, waiting, client):
        wid, links = waiting
        assert Client().post(links["approve"]).status_code == 200
        after = version(wid)
        client.force_login(User.objects.get(username="alice"))

        for method in (client.post, client.get):
            answer = method(links["approve"])
            assert answer.status_code == 403
            assert "sent to someone else" in answer.content.decode()
        assert version(wid) == after and decisions(wid) == [("bob", "approve")]

    def test_a_link_for_a_step_that_moved_on(self, waiting, client, api):
        wid, links = waiting
        assert decide(api("bob"), wid, "approve", "in-app").status_code == 200
        before = version(wid)
        for method in (client.get, client.post):
            assert_refused(method(links["reject"]), 409, "moved on", wid, before)

    def test_a_link_after_a_send_back_and_resubmission_is_for_an_old_round(self, acme, api, client):
        wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
        old = links_for(wid, "bob")
        decide(api("bob"), wid, "send_back", "sb")
        answer = decide(
            api("alice"),
            wid,
            "approve",  # the submitter's approve resubmits
            "rs",
            data={"amountPaise": 4_600_000, "currency": "INR", "department": "eng"},
        )
        assert answer.status_code == 200, answer.content
        assert Workflow.objects.get(pk=wid).current_step == "manager"
        before = version(wid)
        assert_refused(client.post(old["approve"]), 409, "moved on", wid, before)
        assert client.post(links_for(wid, "bob")["approve"]).status_code == 200

    def test_a_link_for_a_person_no_longer_assigned(self, waiting, client, api):
        wid, links = waiting
        moved = api("olga").post(
            f"/api/workflows/{wid}/reassign",
            {"requestId": "r1", "fromUser": "bob", "toUser": "victor"},
            format="json",
        )
        assert moved.status_code == 200, moved.content
        before = version(wid)
        for method in (client.get, client.post):
            assert_refused(method(links["approve"]), 403, "no longer yours", wid, before)

    def test_someone_else_signed_in_is_refused(self, waiting, client):
        wid, links = waiting
        before = version(wid)
        client.force_login(User.objects.get(username="victor"))
        for method in (client.get, client.post):
            assert_refused(method(links["approve"]), 403, "sent to someone else", wid, before)

    def test_a_comment_too_long_records_nothing(self, waiting, client):
        wid, links = waiting
        before = version(wid)
        answer = client.post(links["approve"], {"comment": "x" * 2001})
        assert_refused(answer, 400, "at most 2000", wid, before)

    def test_a_nul_in_the_comment_is_a_sentence_and_records_nothing(self, waiting, client):
        wid, links = waiting
        before = version(wid)
        answer = client.post(links["approve"], {"comment": "fine\x00"})
        assert_refused(answer, 400, COMMENT_NUL, wid, before)


@pytest.mark.django_db(transaction=True)
def test_two_confirmations_at_once_record_one_decision(acme, api):
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    link = links_for(wid, "bob")["approve"]
    go = threading.Barrier(2)
    codes: list[int] = []

    def confirm() -> None:
        client = Client()
        go.wait()
        try:
            codes.append(client.post(link).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=confirm) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # the loser of the race is told the decision stands: a duplicate, not an error
    assert sorted(codes) == [200, 200]
    assert decisions(wid) == [("bob", "approve")]
    assert LinkUse.objects.count() == 1


@pytest.mark.django_db
class TestReminderLinks:
    """A reminder's links are bound to the reminder: they work while its round lasts and
    are refused, recording nothing, once the step has moved on."""

    @pytest.fixture
    def reminded(self, waiting: tuple[str, dict[str, str]]) -> tuple[str, dict[str, str]]:
        import datetime as dt

        from approvals import clock
        from approvals.workers.timers import timer_drain

        wid, _ = waiting
        with clock.shifted(dt.timedelta(days=1, seconds=1)):
            assert timer_drain() == 1
        row = MailMessage.objects.get(workflow_id=wid, kind="reminder")
        assert row.recipient.username == "bob"
        return wid, links_for(wid, "bob")

    def test_a_reminders_approve_link_records_the_decision(self, reminded, client):
        wid, links = reminded
        done = client.post(links["approve"], {"comment": "Seen the reminder"})
        assert done.status_code == 200, done.content[:400]
        assert decisions(wid) == [("bob", "approve")]
        assert Workflow.objects.get(pk=wid).current_step == "finance"

    def test_a_reminders_link_is_refused_once_the_step_moved_on(self, reminded, client, api):
        wid, links = reminded
        assert decide(api("bob"), wid, "send_back", "sb-1", comment="Receipts?").status_code == 200
        before = version(wid)
        answer = client.post(links["approve"])
        assert_refused(answer, 409, "moved on since the e-mail was sent", wid, before)
