"""The inbox's conditional GET: an ETag from the person's inbox version, so a repeated
read that changed nothing is answered 304 after one indexed lookup.

The version is a counter per person (``approvals_inboxversion``, migration 0034) that
PostgreSQL bumps in the transaction of every change to their open tasks, to the
delegations naming them, and to the line or amount of a request they hold a task on.
The tag is a keyed hash (``salted_hmac``) of everything else the answer depends on:

- who asks (organisation and person): one person's tag is never another's;
- the versions of the person and of each colleague they stand in for now, read
  *before* the tasks, so an answer is never labelled newer than it is;
- the minute (the app's clock): what time alone changes (a task falling due, on a
  page that words it) shows within a minute even when no row changed;
- the person's zone, the organisation's (the answer's times are in its offset), the
  query string and the answer's format.

Clients must revalidate every time (``Cache-Control: private, no-cache``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from functools import cache
from typing import Any

from django.conf import settings
from django.http import HttpResponseBase, HttpResponseNotModified
from django.utils.cache import patch_vary_headers
from django.utils.encoding import force_bytes
from django.utils.http import parse_etags

from .. import clock
from ..models import Delegation, Tenant, User
from ..runtime import store

Known = tuple[Any, str, dt.datetime]
SALT = "approvals.inbox.etag"
CACHE_CONTROL = "private, no-cache"
VARY = ("Authorization", "Cookie")
_VARY = ", ".join(VARY)
# An If-None-Match longer than this is not read (the full answer is sent): our tags are
# 34 characters, so a client revalidating honestly never sends more than a few.
MAX_IF_NONE_MATCH = 1024
# The versions of everyone whose tasks the inbox lists: the person, and each colleague
# whose absence, on now, names them to decide for them (as selectors.tasks lists them).
# ``person`` and ``tenant`` are SQL: parameters (then tenant, person, tenant, person), or
# a user row's columns when the versions are read with the user
# (api/inbox_revalidate.py); then ``now`` twice.


def versions_sql(person: str = "%s", tenant: str = "%s") -> str:
    # The organisation's zone leads: the answer's times are written in its offset.
    zone = f"(SELECT z.time_zone FROM {store.table(Tenant)} z WHERE z.id = {tenant})"
    return (
        f"SELECT coalesce({zone}, '') || '|'"
        " || string_agg(h.uid || ':' || coalesce(v.version, 0), ',' ORDER BY h.uid)"
        f" FROM (SELECT CAST({person} AS bigint) AS uid UNION SELECT d.user_id"
        f" FROM {store.table(Delegation)} d"
        f" WHERE d.tenant_id = {tenant} AND d.delegate_id = {person}"
        " AND d.starts_at <= %s AND d.ends_at > %s"
        ") h LEFT JOIN approvals_inboxversion v ON v.person_id = h.uid"
    )


_VERSIONS_SQL = versions_sql()


def inbox_versions(user: User, now: dt.datetime) -> str:
    """The organisation's zone, then ``id:version`` of each person whose tasks ``user``'s
    inbox lists at ``now`` (a version is 0 until anything that person holds first
    changes); one statement."""
    at = store.param(Delegation, "starts_at", now)
    tenant = user.member_tenant_id
    rows = store.fetch(_VERSIONS_SQL, [tenant, user.pk, tenant, user.pk, at, at], prepare=True)
    return str(rows[0][0])


# The request's attribute where the early path (api/inbox_revalidate.py) leaves the
# versions it read: (the person's id, the versions, the time they were read at).
KNOWN = "approvals_inbox_versions"


def inbox_etag(user: User, *, query: str, form: str, known: Known | None = None) -> str:
    """The tag of what ``user``'s inbox answer would be now: reads the versions, unless
    ``known`` holds those of this user read by the early path earlier in the request
    (before the tasks, as the tag needs)."""
    if known is not None and known[0] == user.pk:
        _, versions, now = known
    else:
        now = clock.now()
        versions = inbox_versions(user, now)
    return etag_of(user, versions, now, query=query, form=form)


def etag_of(user: User, versions: str, now: dt.datetime, *, query: str, form: str) -> str:
    """The tag of ``user``'s inbox answer at ``now``, their ``versions`` read at ``now``."""
    key = "\x1f".join(
        map(
            str,
            (
                user.member_tenant_id,
                user.pk,
                versions,
                int(now.timestamp()) // 60,  # the minute
                user.time_zone,
                form,
                query,
            ),
        )
    )
    return f'"{hmac.digest(_hmac_key(settings.SECRET_KEY), key.encode(), "sha256").hex()[:32]}"'


@cache
def _hmac_key(secret: str | bytes) -> bytes:
    """The key of ``salted_hmac(SALT, ..., algorithm="sha256")`` under ``secret`` (a hash
    of the salt and the secret key), derived once per secret key instead of per tag: the
    tags stay those ``salted_hmac`` makes."""
    return hashlib.sha256(force_bytes(SALT) + force_bytes(secret)).digest()


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether the request's If-None-Match names ``etag`` (weak comparison, as RFC 9110
    asks of If-None-Match: ``W/"x"`` names ``"x"``). ``*``, garbage, and headers too long
    to be ours name nothing, so they get the full answer. A header that is just the tag
    (what a client revalidating sends) is not parsed."""
    if not if_none_match or len(if_none_match) > MAX_IF_NONE_MATCH:
        return False
    if if_none_match == etag or if_none_match == f"W/{etag}":
        return True
    return any(tag.removeprefix("W/") == etag for tag in parse_etags(if_none_match))


def tagged(response: HttpResponseBase, etag: str) -> HttpResponseBase:
    """``response`` with the tag and the headers that make a client revalidate it."""
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL
    patch_vary_headers(response, VARY)
    return response


def not_modified(etag: str) -> HttpResponseBase:
    """The 304: no body, the same tag, and the headers ``tagged`` puts (a new answer has
    no Vary of its own to merge ours with)."""
    response = HttpResponseNotModified()
    response["ETag"] = etag
    response["Cache-Control"] = CACHE_CONTROL
    response["Vary"] = _VARY
    return response
