"""audrey, in a real headless Chromium, verifies her organisation (it passes), then finds
an event tampered with behind the app's back named with its request and position; the
offline verifier agrees on the file she downloads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from playwright.sync_api import Browser, expect

from approvals.audit import offline_verify
from approvals.audit.seal import seal_create
from approvals.models import Tenant, Workflow

from ..a11y import assert_accessible
from ..pages.test_browser import shot
from .support import run_expenses, triggers_off

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_audrey_verifies_then_finds_the_tampered_event(
    acme: Tenant,
    api: Any,
    live_server: Any,
    browser: Browser,
    tmp_path: Path,
) -> None:
    ids = run_expenses(api, 3)
    seal_create(tenant=acme)
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("audrey")
    page.get_by_label("Password").fill("demo")
    page.get_by_role("button", name="Sign in").click()

    # from the navigation, the whole organisation
    page.get_by_role("link", name="Verify", exact=True).click()
    page.get_by_label("Every request of the organisation").check()
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("#verdict")).to_have_text(
        "All 3 requests verify: every event chains to the one before and every seal checks."
    )
    shot(page, "audit-verify-ok")
    assert_accessible(page, "the Verify page")

    # a database superuser edits the second expense's third event
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "edited"}\' '
            "WHERE workflow_id = %s AND seq = 3",
            [ids[1]],
        )
    wf = Workflow.objects.get(pk=ids[1])
    page.get_by_role("button", name="Verify").click()
    expect(page.locator("#verdict")).to_have_text("1 problem found.")
    first = page.locator(".first-break")
    expect(first).to_contain_text(f"Expense claim {wf.subject_id}")
    expect(first).to_contain_text(f"Event 3 of {wf.version}")
    expect(first).to_contain_text("changed after it was written")
    shot(page, "audit-verify-broken")
    assert_accessible(page, "the Verify page with a problem")

    # the export she downloads, checked offline, names the same event
    with page.expect_download() as download:
        page.evaluate("window.location = '/api/audit/export?format=jsonl'")
    path = tmp_path / "export.jsonl"
    download.value.save_as(path)
    report = offline_verify.verify_export(str(path))
    assert [(p.workflow_id, p.seq) for p in report.problems] == [(ids[1], 3)]
    # and as an auditor runs it, on the command line
    run = subprocess.run(
        [sys.executable, "-m", "approvals.audit.offline_verify", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    broken = [line for line in run.stdout.splitlines() if line.startswith("BROKEN")]
    assert broken == [f"BROKEN workflow {ids[1]} seq 3: {offline_verify.EDITED}"]

    # the link leads to the request
    first.get_by_role("link").click()
    expect(page).to_have_url(f"{live_server.url}/workflows/{wf.pk}")
    context.close()
