"""GET /api/me/tasks answers a conditional GET: an ETag from the person's inbox version
(bumped at the commit of whatever changes what they see), so a repeated read that
changed nothing is a 304 with no body; anything that changes the answer, another
person's tag, or a header that is not ours gives the full answer.

The versions are bumped by a deferred trigger at COMMIT: these tests commit
(``transaction=True``)."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django.utils.crypto import salted_hmac

from approvals import clock
from approvals.api import inbox_etag
from approvals.models import Delegation, User
from approvals.services.workflows import workflow_decide

from ..helpers import decide
from ..pages.support import expense_started

pytestmark = pytest.mark.django_db(transaction=True)

DAY = dt.timedelta(days=1)


@pytest.fixture
def early_in_a_minute() -> Iterator[None]:
    """The app's clock moved to a second into the next minute, so a test's reads all
    fall in one minute (the tag holds the minute)."""
    now = clock.now()
    to_next = dt.timedelta(seconds=61 - now.second, microseconds=-now.microsecond)
    with clock.shifted(to_next):
        yield


def _read(client: Any, tag: str | None = None, **params: Any) -> Any:
    headers = {"HTTP_IF_NONE_MATCH": tag} if tag is not None else {}
    return client.get("/api/me/tasks", params, **headers)


def _tag(client: Any, **params: Any) -> str:
    response = _read(client, **params)
    assert response.status_code == 200, response.content
    return str(response["ETag"])


def test_an_unchanged_inbox_is_a_304_with_no_body(acme, api, early_in_a_minute):
    expense_started("ETAG-1")
    bob = api("bob")
    first = _read(bob)
    assert first.status_code == 200
    tag = first["ETag"]
    assert tag.startswith('"') and tag.endswith('"') and len(tag) == 34
    # kept by the client only to be revalidated; never by a shared cache
    assert first["Cache-Control"] == "private, no-cache"
    assert "no-store" not in first["Cache-Control"]
    assert "Authorization" in first["Vary"] and "Cookie" in first["Vary"]

    again = _read(bob, tag)
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == tag
    # the same for a weak form of the tag, and for the tag among others
    assert _read(bob, f"W/{tag}").status_code == 304
    assert _read(bob, f'"other", {tag}').status_code == 304
    # and without the header, the full answer with the same tag
    full = _read(bob)
    assert full.status_code == 200 and full["ETag"] == tag
    assert len(full.json()["items"]) == 1


def test_a_decision_gives_a_new_tag(acme, api, early_in_a_minute):
    wf = expense_started("ETAG-2")
    expense_started("ETAG-3")
    bob = api("bob")
    tag = _tag(bob)
    assert decide(bob, wf, "approve", uuid.uuid4().hex).status_code == 200
    after = _read(bob, tag)
    assert after.status_code == 200
    assert after["ETag"] != tag
    assert [i["workflowId"] for i in after.json()["items"]] != [wf]
    assert wf not in {i["workflowId"] for i in after.json()["items"]}
    # and the new tag holds until the next change
    assert _read(bob, after["ETag"]).status_code == 304


def test_a_new_task_gives_a_new_tag(acme, api, early_in_a_minute):
    bob = api("bob")
    tag = _tag(bob)
    assert _read(bob, tag).status_code == 304
    wf = expense_started("ETAG-4")
    after = _read(bob, tag)
    assert after.status_code == 200
    assert [i["workflowId"] for i in after.json()["items"]] == [wf]


def test_an_absence_starting_gives_the_stand_in_a_new_tag(acme, api, early_in_a_minute):
    wf = expense_started("ETAG-5")
    ivan = api("ivan")
    tag = _tag(ivan)
    bob = User.objects.get(username="bob")
    now = clock.now()
    Delegation.objects.create(
        tenant_id=bob.member_tenant_id,
        user=bob,
        delegate=User.objects.get(username="ivan"),
        starts_at=now - DAY,
        ends_at=now + DAY,
    )
    after = _read(ivan, tag)
    assert after.status_code == 200
    assert after["ETag"] != tag
    # and a change to bob's tasks now changes ivan's tag too
    stand_in_tag = after["ETag"]
    assert decide(api("bob"), wf, "approve", uuid.uuid4().hex).status_code == 200
    assert _read(ivan, stand_in_tag).status_code == 200


def test_the_minute_changing_gives_a_new_tag(acme, api, early_in_a_minute):
    expense_started("ETAG-6")
    bob = api("bob")
    tag = _tag(bob)
    with clock.shifted(dt.timedelta(minutes=1)):
        later = _read(bob, tag)
        assert later.status_code == 200
        assert later["ETag"] != tag
        assert _read(bob, later["ETag"]).status_code == 304


def test_the_query_string_is_part_of_the_tag(acme, api, early_in_a_minute):
    expense_started("ETAG-7")
    expense_started("ETAG-8")
    bob = api("bob")
    tag = _tag(bob)
    one = _read(bob, tag, limit=1)
    assert one.status_code == 200 and one["ETag"] != tag
    assert len(one.json()["items"]) == 1
    assert _read(bob, one["ETag"], limit=1).status_code == 304


def test_someone_elses_tag_never_gives_a_304(acme, api, early_in_a_minute):
    # two people whose inboxes read the same (empty) still have tags of their own
    fiona, ivan = api("fiona"), api("ivan")
    fiona_tag, ivan_tag = _tag(fiona), _tag(ivan)
    assert fiona_tag != ivan_tag
    assert _read(ivan, fiona_tag).status_code == 200
    assert _read(fiona, ivan_tag).status_code == 200
    assert _read(ivan, ivan_tag).status_code == 304


NOT_OURS = [
    "*",  # names no version: the full answer
    "garbage without quotes",
    '"' + "a" * 5000 + '"',  # far longer than any tag of ours
    ", , ,",
    'W/"nope", "nope2"',
    "\x7f\x01",
]


def test_if_none_match_that_is_not_ours_gets_the_full_answer(acme, api):
    expense_started("ETAG-9")
    bob = api("bob")
    for header in NOT_OURS:
        response = _read(bob, header)
        assert response.status_code == 200, header
        assert len(response.json()["items"]) == 1, header


def test_our_tag_after_a_huge_list_is_not_read(acme, api, early_in_a_minute):
    bob = api("bob")
    tag = _tag(bob)
    padded = ", ".join([f'"{n:032x}"' for n in range(200)] + [tag])
    assert _read(bob, padded).status_code == 200  # too long to be read: the full answer


def test_no_stale_304_after_a_decision_committed(acme, api, early_in_a_minute):
    # One thread decides bob's requests one by one while another reads his inbox
    # conditionally: a read that began after a decision committed never shows it.
    ids = [expense_started(f"ETAG-R{n}") for n in range(8)]
    bob_user = User.objects.get(username="bob")
    committed: list[str] = []  # appended only once a decision's transaction committed
    failures: list[str] = []
    done = threading.Event()

    def decider() -> None:
        try:
            for wf in ids:
                workflow_decide(
                    user=bob_user, workflow_id=wf, decision="approve", request_id=uuid.uuid4().hex
                )
                committed.append(wf)
        finally:
            done.set()
            connections.close_all()

    reads = 0

    def reader(client: Any) -> None:
        nonlocal reads
        tag: str | None = None
        shown: set[str] = set()
        try:
            while True:
                finished = done.is_set()
                decided = set(committed)  # before the read begins
                response = _read(client, tag)
                if response.status_code == 200:
                    tag = response["ETag"]
                    shown = {i["workflowId"] for i in response.json()["items"]}
                elif response.status_code != 304:
                    failures.append(f"status {response.status_code}")
                    return
                reads += 1
                if stale := shown & decided:
                    failures.append(f"{response.status_code} still shows {sorted(stale)}")
                    return
                if finished:
                    return
        finally:
            connections.close_all()

    bob = api("bob")
    threads = [threading.Thread(target=decider), threading.Thread(target=reader, args=(bob,))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not failures, failures
    assert committed == ids
    assert reads >= 2
    # and after the last decision the list is empty, the tag then steady
    final = _read(bob)
    assert final.json()["items"] == []
    assert _read(bob, final["ETag"]).status_code == 304


def test_the_tag_is_the_keyed_hash_of_what_the_answer_depends_on(acme, settings):
    # Tags clients hold stay valid across this code's versions: still salted_hmac's.
    bob = User.objects.get(username="bob")
    now = dt.datetime(2026, 3, 2, 9, 30, 15, tzinfo=dt.UTC)
    key = "\x1f".join(
        map(str, (bob.member_tenant_id, bob.pk, "7:3", 29540730, bob.time_zone, "json", "limit=5"))
    )  # the minute of ``now``
    tags: set[str] = set()
    for secret in (settings.SECRET_KEY, "another-secret-key-for-the-tags-only-9d1e"):
        settings.SECRET_KEY = secret
        expected = f'"{salted_hmac(inbox_etag.SALT, key, algorithm="sha256").hexdigest()[:32]}"'
        assert inbox_etag.etag_of(bob, "7:3", now, query="limit=5", form="json") == expected
        tags.add(expected)
    assert len(tags) == 2  # another secret key, another tag


def test_if_none_match_names_the_tag_alone_weakly_or_among_others():
    tag = '"' + "0123456789abcdef" * 2 + '"'
    assert inbox_etag.matches(tag, tag)
    assert inbox_etag.matches(f"W/{tag}", tag)
    assert inbox_etag.matches(f'"other", {tag}', tag)
    assert inbox_etag.matches(f'W/"other",W/{tag}', tag)
    for header in (None, "", "*", tag[:-1], f"w/{tag}", f"W/ {tag}", '"other"', tag.upper()):
        assert not inbox_etag.matches(header, tag), header
