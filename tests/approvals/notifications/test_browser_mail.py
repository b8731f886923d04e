"""Fiona approves from the link in her e-mail, in a real headless Chromium: the mail is
read from the file backend, the Approve link opened without a session, confirmed, and
the workflow moves on. Screenshots of the HTML mail and of the confirmation page are
written to screenshots/ (ignored by git) on every run."""

from __future__ import annotations

import email
import email.policy
import re
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User, Workflow, WorkflowEvent
from approvals.notifications.sender import mail_send
from approvals.services.workflows import workflow_decide, workflow_start

SHOTS = Path(__file__).resolve().parents[3] / "screenshots"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def mails_in(folder: Path) -> list[Message]:
    """Every message the file backend wrote (one file per connection, messages
    separated by a line of dashes), parsed from the bytes: a body sent as 8-bit UTF-8
    (a rupee sign) only decodes right from bytes."""
    out: list[Message] = []
    for path in sorted(folder.iterdir()):
        for chunk in path.read_bytes().split(b"-" * 79):
            if chunk.strip():
                out.append(email.message_from_bytes(chunk.strip(), policy=email.policy.default))
    return out


def part(msg: Message, kind: str) -> str:
    for p in msg.walk():
        if p.get_content_type() == kind:
            payload = p.get_payload(decode=True)
            assert isinstance(payload, bytes)
            return payload.decode(p.get_content_charset() or "utf-8")
    raise AssertionError(f"no {kind} part")


def test_fiona_approves_from_the_link_in_her_mail(
    acme: Any, live_server: Any, browser: Browser, settings: Any, tmp_path: Path
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    settings.EMAIL_FILE_PATH = str(tmp_path)
    settings.APPROVALS_BASE_URL = live_server.url
    SHOTS.mkdir(exist_ok=True)

    # given alice's expense, approved by bob, waiting for finance
    alice, bob = (User.objects.get(username=u) for u in ("alice", "bob"))
    wid = workflow_start(
        submitter=alice,
        template_key="expense-approval",
        subject_type="expense",
        subject_id="E-1042",
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    ).workflow_id
    workflow_decide(user=bob, workflow_id=wid, decision="approve", request_id="bob-1")
    assert mail_send()["sent"] == 3  # bob's, then fiona's and farah's

    [to_fiona] = [m for m in mails_in(tmp_path) if m["To"] == "fiona@acme.example"]
    assert to_fiona["Subject"].strip() == "Please approve: Expense claim ₹45,000.00 from Alice"
    text, html = part(to_fiona, "text/plain"), part(to_fiona, "text/html")
    approve = re.search(r"^Approve: (\S+)$", text, re.M)
    assert approve is not None and approve.group(1).startswith(live_server.url)

    # the HTML mail, as a phone shows it
    phone = browser.new_context(viewport={"width": 390, "height": 760})
    mail_page = phone.new_page()
    mail_page.set_content(html)
    expect(mail_page.get_by_role("link", name="Approve")).to_be_visible()
    expect(mail_page.get_by_text("₹45,000.00").first).to_be_visible()
    mail_page.screenshot(path=str(SHOTS / "mail-task.png"), full_page=True)

    # when fiona opens the Approve link (no session) and confirms
    page = phone.new_page()
    page.goto(approve.group(1))
    expect(page.get_by_role("heading", name="Approve this request?")).to_be_visible()
    expect(page.get_by_text("₹45,000.00").first).to_be_visible()
    assert Workflow.objects.get(pk=wid).current_step == "finance"  # opening decided nothing
    page.screenshot(path=str(SHOTS / "link-confirm.png"), full_page=True)
    page.get_by_label("Comment (optional)").fill("Receipts checked")
    page.get_by_role("button", name="Confirm: Approve").click()

    # then the decision is hers and the workflow moves on
    expect(
        page.get_by_role("heading", name=re.compile("You approved Expense claim"))
    ).to_be_visible()
    page.screenshot(path=str(SHOTS / "link-done.png"), full_page=True)
    wf = Workflow.objects.get(pk=wid)
    assert wf.status == "COMPLETED"
    last = WorkflowEvent.objects.filter(workflow_id=wid, type="DecisionRecorded").latest("seq")
    assert (last.payload["actor"], last.payload["comment"]) == ("fiona", "Receipts checked")

    # and a second click on the same link records nothing more
    page.goto(approve.group(1))
    expect(page.get_by_text("nothing more to do")).to_be_visible()
    page.screenshot(path=str(SHOTS / "link-recorded.png"), full_page=True)
    assert Workflow.objects.get(pk=wid).version == wf.version
    phone.close()
