"""Retention and archive in the admin, on PostgreSQL and in a real headless Chromium: an
organisation or finance admin sets the retention and the live window in whole years and
months, reads what the window does in words, and every bad value is refused in words
and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from playwright.sync_api import Browser, expect

from approvals.admin.retention import MONTHS_WHOLE, WINDOW_LONGER, YEARS_WHOLE, window_sentence
from approvals.audit.models import RetentionPolicy
from approvals.audit.retention import retention_set, spans
from approvals.models import Tenant, User

from ..a11y import assert_accessible
from ..pages.test_browser import shot
from .test_browser_admin_words import admin_page

URL = "/admin/retention/"


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["olga", "fiona"])
def test_an_admin_sets_the_live_window_and_reads_what_it_does(acme: Tenant, who: str) -> None:
    client = _client(who)
    page = client.get(URL)
    assert page.status_code == 200
    assert window_sentence(12) in page.content.decode()  # the deployment's default
    answer = client.post(URL, {"years": "3", "live_months": "18"}, follow=True)
    assert answer.status_code == 200
    body = answer.content.decode()
    assert (
        "Requests finished more than 18 months ago move to the archive; they stay "
        "readable, and nobody can change them." in body
    )
    assert spans(acme.pk) == (3, 18)
    policy = RetentionPolicy.objects.get(tenant=acme)
    assert policy.set_by == who
    # reachable from the admin home
    assert reverse("admin:retention") in client.get("/admin/").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("who", ["audrey", "alice", "bob"])
def test_others_may_not(acme: Tenant, who: str) -> None:
    retention_set(tenant=acme, years=2, live_months=6, by="olga")
    client = _client(who)
    assert client.get(URL).status_code in (302, 403)
    client.post(URL, {"years": "9", "live_months": "1"})
    assert spans(acme.pk) == (2, 6)
    assert reverse("admin:retention") not in client.get("/admin/").content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("years", "months", "words"),
    [
        ("2", "", MONTHS_WHOLE),
        ("2", "abc", MONTHS_WHOLE),
        ("2", "1.5", MONTHS_WHOLE),
        ("2", "6 months", MONTHS_WHOLE),
        ("2", "0", "The live window is at least 1 month."),
        ("2", "-3", "The live window is at least 1 month."),
        ("2", "25", WINDOW_LONGER.format(most=24, years=2)),
        ("1", "13", WINDOW_LONGER.format(most=12, years=1)),
        ("2", "99999999999999999999", WINDOW_LONGER.format(most=24, years=2)),
        ("", "6", YEARS_WHOLE),
        ("2.5", "6", YEARS_WHOLE),
        ("0", "6", "The retention is at least 1 year."),
        ("101", "6", "The retention is at most 100 years."),
    ],
)
def test_a_bad_value_is_refused_in_words_and_changes_nothing(
    acme: Tenant, years: str, months: str, words: str
) -> None:
    retention_set(tenant=acme, years=2, live_months=6, by="olga")
    before = RetentionPolicy.objects.filter(tenant=acme).values().get()
    answer = _client("olga").post(URL, {"years": years, "live_months": months})
    assert answer.status_code == 400
    body = answer.content.decode()
    assert words in body and "Nothing was changed" in body
    assert RetentionPolicy.objects.filter(tenant=acme).values().get() == before


@pytest.mark.django_db(transaction=True)
@pytest.mark.browser
def test_the_retention_page_in_a_browser(acme: Tenant, live_server: Any, browser: Browser) -> None:
    page = admin_page(browser, live_server.url, "olga")
    page.get_by_role("link", name="Set retention and the live window").click()
    expect(page.locator("#window-words")).to_have_text(window_sentence(12))
    page.get_by_label("Live window (months)").fill("200")
    page.get_by_role("button", name="Save retention and live window").click()
    expect(page.locator(".errornote").first).to_contain_text("Nothing was changed")
    expect(page.locator(".field-live_months .errorlist")).to_have_text(
        WINDOW_LONGER.format(most=84, years=7)
    )
    shot(page, "retention-refused-1280")
    page.get_by_label("Live window (months)").fill("9")
    page.get_by_role("button", name="Save retention and live window").click()
    expect(page.locator("#window-words")).to_have_text(window_sentence(9))
    expect(page.locator(".messagelist")).to_contain_text(window_sentence(9))
    assert_accessible(page, "the retention page")
    shot(page, "retention-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    overflow = page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )
    assert overflow <= 0
    expect(page.get_by_label("Live window (months)")).to_be_visible()
    shot(page, "retention-390")
