"""olga offboards ivan in a real headless Chromium: from the admin home to the page,
where each task would go, one given to farah, confirmed with a reason in the dialog
that asks first; irene, an IT admin beside ivan, finds the group task still hers,
marked as handed on from him, and bob, victor and farah each find the mark on the
task that came to them. axe-core checks the offboarding page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from approvals.models import User

from ..a11y import assert_accessible
from ..pages.test_browser import shot, sign_in
from .test_offboarding import holders, ivans_tasks  # noqa: F401

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser,
]


def test_olga_offboards_ivan_and_irene_sees_the_mark(
    ivans_tasks: dict[str, str],  # noqa: F811
    live_server: Any,
    browser: Browser,  # noqa: F811
) -> None:
    base = live_server.url
    olga = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    olga.goto(f"{base}/admin/login/")
    olga.get_by_label("Username").fill("olga")
    olga.get_by_label("Password").fill("demo")
    olga.get_by_role("button", name="Log in").click()

    olga.get_by_role("link", name="Offboard someone who leaves").click()
    olga.get_by_label("Who is leaving").fill("Ivan")
    olga.get_by_role("button", name="Show their tasks").click()
    table = olga.locator("#handover")
    expect(table).to_contain_text("back to the other members of IT admins: Irene")
    expect(table).to_contain_text("back to Bob, for whom Ivan held it")
    expect(table).to_contain_text("Victor, Ivan's manager")
    given = olga.get_by_label("Give Ivan note M-4 (Review step) instead to")
    # the request's own submitter is refused in words before anything is confirmed
    given.fill("Alice")
    olga.get_by_role("button", name="Show where the tasks go").click()
    expect(table).to_contain_text("Alice submitted this request, and nobody decides a step")
    shot(olga, "offboarding-refused-choice")
    given.fill("Farah")
    olga.get_by_role("button", name="Show where the tasks go").click()
    expect(table).to_contain_text("Farah, chosen by you")
    assert User.objects.get(username="ivan").is_active  # a preview changes nothing
    olga.get_by_label("Why they are leaving").fill("moved to another company")
    shot(olga, "offboarding")
    assert_accessible(olga, "the offboarding page")
    olga.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing runs past
    assert olga.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    shot(olga, "offboarding-390")
    olga.set_viewport_size({"width": 1280, "height": 900})
    olga.get_by_role("button", name="Deactivate Ivan and hand on these tasks").click()
    # deactivating cannot be taken back: the page's dialog asks first, "Keep it" focused
    dialog = olga.locator("#confirm-decision")
    expect(dialog).to_contain_text(
        "Deactivate Ivan and hand on their tasks as shown? They can no longer sign in"
    )
    expect(dialog.get_by_role("button", name="Keep it")).to_be_focused()
    assert User.objects.get(username="ivan").is_active  # nothing changes while it asks
    dialog.get_by_role("button", name="Deactivate Ivan and hand on these tasks").click()
    expect(olga.get_by_text("Ivan is deactivated. 4 open tasks handed on.")).to_be_visible()
    assert holders(ivans_tasks["chosen"]) == {"farah": "ivan"}

    # the group task stays with the group (irene), not with ivan's manager
    assert holders(ivans_tasks["group"]) == {"irene": "ivan"}
    irene = sign_in(browser, base, "irene")
    task = irene.locator(f"li[data-workflow='{ivans_tasks['group']}']")
    expect(task).to_contain_text("handed on from Ivan (left)")
    shot(irene, "offboarding-inbox-mark")

    # every other receiver finds the mark on the task that came to them
    for receiver, kind in (("bob", "behalf"), ("victor", "named"), ("farah", "chosen")):
        assert holders(ivans_tasks[kind]) == {receiver: "ivan"}, kind
        inbox = sign_in(browser, base, receiver)
        row = inbox.locator(f"li[data-workflow='{ivans_tasks[kind]}']")
        expect(row).to_contain_text("handed on from Ivan (left)")
        inbox.context.close()
