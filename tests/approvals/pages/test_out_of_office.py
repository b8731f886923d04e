"""Out of office after it is set: ending a current absence now, changing one, deleting a
planned one (each the owner's alone), and the banner every page shows while it is on."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals import clock
from approvals.models import Delegation, DirectoryVersion, User, time_bounds
from approvals.pages.absence import ABSENCE_BANNER, ABSENCE_ENDED
from approvals.services.delegations import (
    DELEGATE_SELF,
    DELEGATION_STARTED,
    DelegationRefused,
    delegation_change,
)

from ..helpers import decide, start_expense
from .support import signed_in

pytestmark = pytest.mark.django_db

DAY = dt.timedelta(days=1)
PAGE = "/account/out-of-office"


def _away(who: str, stand_in: str, starts: dt.datetime, ends: dt.datetime) -> Delegation:
    user = User.objects.get(username=who)
    return Delegation.objects.create(
        tenant_id=user.tenant_id,
        user=user,
        delegate=User.objects.get(username=stand_in),
        starts_at=starts,
        ends_at=ends,
    )


def _on_behalf(api: Any, wid: str, request_id: str) -> Any:
    return decide(api("ivan"), wid, "approve", request_id, onBehalfOf="bob")


def test_ending_an_absence_now_stops_the_stand_in_deciding(acme, api):
    # given alice's request waits for bob, and then bob goes away with ivan standing in
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    now = clock.now()
    absence = _away("bob", "ivan", now - DAY, now + 5 * DAY)
    version = DirectoryVersion.objects.get(pk=1).version

    # when bob ends it from the page
    response = signed_in("bob").post(f"{PAGE}/{absence.pk}/end", follow=True)

    # then it has ended, the directory moved on, and ivan may no longer decide for bob
    assert ABSENCE_ENDED in response.content.decode()
    absence.refresh_from_db()
    assert absence.ends_at <= clock.now()
    assert DirectoryVersion.objects.get(pk=1).version > version
    refused = _on_behalf(api, wid, "after-end")
    # ivan read the request only as bob's stand-in: now it is not his to see at all
    assert refused.status_code == 404, refused.content
    assert api("alice").get(f"/api/workflows/{wid}").json()["status"] == "PENDING_MANAGER"


def test_the_stand_in_decides_while_the_absence_is_on(acme, api):
    # the counterpart of the test above: the same decision is taken before it ends
    wid = start_expense(api("alice"), 4_500_000).json()["workflowId"]
    now = clock.now()
    _away("bob", "ivan", now - DAY, now + 5 * DAY)

    assert _on_behalf(api, wid, "while-on").status_code == 200


def test_changing_an_absences_days_outside_1970_to_2200_is_refused_with_a_sentence(acme):
    now = clock.now()
    absence = _away("bob", "ivan", now + DAY, now + 5 * DAY)
    bob = signed_in("bob")

    response = bob.post(
        f"{PAGE}/{absence.pk}/change",
        {"delegate": "ivan", "first_day": "2026-12-10", "last_day": "2300-01-01"},
    )

    assert response.status_code == 400
    assert time_bounds.DAY_OUT_OF_RANGE in response.content.decode()
    absence.refresh_from_db()
    assert absence.ends_at == now + 5 * DAY


def test_changing_an_absence_moves_its_days_and_stand_in(acme):
    now = clock.now()
    absence = _away("bob", "ivan", now + DAY, now + 5 * DAY)

    response = signed_in("bob").post(
        f"{PAGE}/{absence.pk}/change",
        {"delegate": "victor", "first_day": "2200-12-01", "last_day": "2200-12-31"},
    )

    assert response.status_code == 302
    absence.refresh_from_db()
    assert absence.delegate.username == "victor"
    assert absence.starts_at.date() == dt.date(2200, 12, 1)


def test_a_planned_absence_is_deleted_and_one_that_began_is_not(acme):
    now = clock.now()
    planned = _away("bob", "ivan", now + 3 * DAY, now + 5 * DAY)
    begun = _away("bob", "victor", now - DAY, now + DAY)
    bob = signed_in("bob")

    assert bob.post(f"{PAGE}/{planned.pk}/delete").status_code == 302
    refused = bob.post(f"{PAGE}/{begun.pk}/delete", follow=True)

    assert not Delegation.objects.filter(pk=planned.pk).exists()
    assert Delegation.objects.filter(pk=begun.pk).exists()
    assert DELEGATION_STARTED in refused.content.decode()


@pytest.mark.parametrize("action", ["end", "change", "delete"])
def test_someone_elses_absence_is_not_found(acme, action):
    now = clock.now()
    bobs = _away("bob", "ivan", now - DAY, now + DAY)
    alice = signed_in("alice")

    response = alice.post(
        f"{PAGE}/{bobs.pk}/{action}",
        {"delegate": "victor", "first_day": "2026-12-01", "last_day": "2026-12-05"},
    )

    assert response.status_code == 404
    bobs.refresh_from_db()
    assert (bobs.delegate.username, bobs.ends_at) == ("ivan", now + DAY)


def test_the_page_lists_current_and_planned_absences_with_their_actions(acme):
    now = clock.now()
    current = _away("bob", "ivan", now - DAY, now + DAY)
    planned = _away("bob", "victor", now + 10 * DAY, now + 12 * DAY)

    page = signed_in("bob").get(PAGE).content.decode()

    assert f"{PAGE}/{current.pk}/end" in page
    assert f"{PAGE}/{current.pk}/delete" not in page
    assert f"{PAGE}/{planned.pk}/delete" in page
    assert f"{PAGE}/{planned.pk}/end" not in page
    assert f"{PAGE}/{planned.pk}/change" in page


def test_the_banner_shows_while_the_absence_is_on_and_not_after_ending_it(acme):
    now = clock.now()
    absence = _away("bob", "ivan", now - DAY, now + 3 * DAY)
    bob = signed_in("bob")
    ivan = User.objects.get(username="ivan")
    banner_start = ABSENCE_BANNER.split("{")[0]

    on = bob.get("/").content.decode()
    assert banner_start in on
    assert f"{ivan.first_name or ivan.username} decides for you" in on

    # the banner's own button ends it and comes back to the page it was on
    ended = bob.post(f"{PAGE}/{absence.pk}/end", {"next": "/search"})
    assert ended["Location"] == "/search"
    assert banner_start not in bob.get("/").content.decode()


def test_the_banner_costs_one_query_per_page(acme):
    now = clock.now()
    _away("bob", "ivan", now - DAY, now + 3 * DAY)
    bob = signed_in("bob")
    bob.get("/")  # warm whatever is looked up once

    with CaptureQueriesContext(connection) as with_banner:
        bob.get("/")
    Delegation.objects.all().delete()
    with CaptureQueriesContext(connection) as without:
        bob.get("/")

    delegation_queries = [
        q["sql"] for q in with_banner.captured_queries if Delegation._meta.db_table in q["sql"]
    ]
    # the inbox may ask about delegations for itself; the banner adds at most one query
    assert len(with_banner.captured_queries) - len(without.captured_queries) <= 1
    assert delegation_queries


@pytest.mark.parametrize("elsewhere", ["https://example.com/", "//example.com/", "/\\example.com/"])
def test_ending_from_the_banner_never_leads_off_the_site(acme, elsewhere):
    now = clock.now()
    absence = _away("bob", "ivan", now - DAY, now + DAY)

    response = signed_in("bob").post(f"{PAGE}/{absence.pk}/end", {"next": elsewhere})

    assert response["Location"] == PAGE


def test_a_change_is_checked_as_setting_one_is(acme):
    # the service itself refuses, whatever sends it: times outside the range, a stand-in
    # who cannot act, oneself

    now = clock.now()
    absence = _away("bob", "ivan", now + DAY, now + 5 * DAY)
    bob = User.objects.get(username="bob")
    late = dt.datetime(2300, 1, 1, tzinfo=dt.UTC)
    cases = [
        (User.objects.get(username="ivan"), now + DAY, late, time_bounds.MOMENT_OUT_OF_RANGE),
        (bob, now + DAY, now + 2 * DAY, DELEGATE_SELF),
    ]
    for delegate, starts, ends, sentence in cases:
        with pytest.raises(DelegationRefused, match=sentence):
            delegation_change(
                user=bob,
                delegation_id=absence.pk,
                delegate=delegate,
                starts_at=starts,
                ends_at=ends,
            )
    absence.refresh_from_db()
    assert (absence.delegate.username, absence.ends_at) == ("ivan", now + 5 * DAY)
