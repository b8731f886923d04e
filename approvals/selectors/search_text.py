"""The search's questions of a workflow's own columns: its words, its amount and who
decided it. Each answers with a condition (a ``Q`` or an expression) for the search to
combine with the read rule, so one query serves the page, the API and the export.

Words: on PostgreSQL a full-text match over the column of words that the GIN index
``workflow_search_words`` (migrations 0026 and 0040) indexes, each word asked as a
prefix of the words there; on SQLite (``make run``) a plain case-insensitive match of the same text
(the reference, the summary and every string in the data, keys left out)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import (
    BigIntegerField,
    BooleanField,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.expressions import RawSQL

from ..models import User, Workflow, WorkflowEvent
from ..runtime import tenant_scope

TABLE = '"approvals_workflow"'
CONFIG = "'english'::regconfig"
# The words of each workflow, a column PostgreSQL generates (migration 0040) and the GIN
# index ``workflow_search_words`` over it: a match is checked again on its row, and a
# common word's first page tests the newest rows one by one, each a comparison with the
# stored words rather than a conversion of the row's text and data.
VECTOR = f'{TABLE}."search_words"'
INDEX = "workflow_search_words"
# Migration 0026's index of people's names: a word of a search finds the requests of
# the people it names without reading every person of the organisation.
PEOPLE = '"approvals_user"'
NAME_VECTOR = (
    f"to_tsvector('simple'::regconfig, {PEOPLE}.\"username\" || ' ' || {PEOPLE}.\"first_name\""
    f" || ' ' || {PEOPLE}.\"last_name\")"
)
_WORDLIKE = re.compile(r"\w")
_NONE = Q(pk__in=[])


def words_of(text: str) -> list[str]:
    """The words of a search, each once, in order; bare punctuation (``-``, ``₹``) is no
    word and asks nothing."""
    seen: dict[str, None] = {}
    for word in text.split():
        if _WORDLIKE.search(word):
            seen.setdefault(word.casefold(), None)
    return list(seen)


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def _tsquery(lexemes: Sequence[str], *, prefix: bool) -> str | None:
    # A lexeme with a quote or a backslash would need the tsquery syntax's escapes; the
    # parser makes none, and one that did would only be left out.
    parts = [f"'{lex}'" for lex in lexemes if "'" not in lex and "\\" not in lex]
    if not parts:
        return None
    if prefix:  # only the last part: "ivy-00" is the whole "ivy" and a number "-00..."
        parts[-1] += ":*"
    return " & ".join(parts)


def _queries(words: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
    """Each word as two ``tsquery`` values, split by PostgreSQL's own parser (``TRIP-1``
    is ``trip`` and ``-1``): its stems in English for the text (``hotels`` is
    ``hotel``; None for a stop word such as ``the``), and its lexemes with the last a
    prefix for the names (``ali`` finds Alice). One round trip."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT w,"
            f" array(SELECT lexeme FROM unnest(to_tsvector({CONFIG}, w)) ORDER BY positions[1]),"
            " array(SELECT lexeme FROM unnest(to_tsvector('simple'::regconfig, w))"
            " ORDER BY positions[1])"
            " FROM unnest(%s::text[]) AS w",
            [list(words)],
        )
        rows = cur.fetchall()
    return {
        word: (_tsquery(stems, prefix=False), _tsquery(lexemes, prefix=True))
        for word, stems, lexemes in rows
    }


def _plain_match(word: str) -> Q:
    """SQLite: the word anywhere in the reference, the summary or a string of the data."""
    pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    in_data = RawSQL(
        f'EXISTS (SELECT 1 FROM json_tree({TABLE}."data") AS t'
        " WHERE t.type = 'text' AND t.value LIKE %s ESCAPE '\\')",
        [pattern],
        output_field=BooleanField(),
    )
    return Q(subject_id__icontains=word) | Q(summary__icontains=word) | Q(in_data)


class WordsMatch(NamedTuple):
    condition: Q
    # The share of workflows the words' text is likely to match at most (from the
    # column's statistics), or None when a word may match otherwise (a kind or a
    # person it names) or nothing is known (SQLite).
    share: float | None
    # The same words asked of the GIN index through ``approvals_search_ids`` (migration
    # 0043), for a query that reads the matches first while the transaction acts for
    # the organisation: under its policy the index cannot serve ``condition``. ANDed
    # with ``condition``, which then only checks the rows the index found. None on
    # SQLite and for ``indexed=False``.
    lookup: Q | None = None


def words_match(
    words: Sequence[str],
    *,
    tenant_id: int,
    kinds: Iterable[tuple[str, str]],
    indexed: bool = True,
) -> WordsMatch:
    """Every word in the workflow's text, the kind of request (its key or title) or the
    submitter's name. The kinds and the people a word names are looked up first, so the
    condition on workflows is indexed throughout (the text's GIN index, and the tenant's
    submitter and kind indexes) and PostgreSQL can combine the three in a BitmapOr.

    ``indexed=False`` for a search among rows already few (a person's own, by id): the
    words are then tested on those rows, never read from the GIN index, whose list of a
    common word holds its matches in every organisation (56,000 rows for "hotel" at ten
    million events, read to keep 15 of a person's 182)."""
    words_of_row = VECTOR if indexed else f"COALESCE({VECTOR}, ''::tsvector)"
    kinds = list(kinds)
    queries = _queries(words) if _postgres() and words else {}
    condition = Q()
    lookup: Q | None = Q() if indexed and _postgres() else None
    share: float | None = 1.0 if _postgres() else None
    for word in words:
        arm = _NONE
        # the same arm with its text asked through the function (``lookup``)
        indexed_arm = _NONE
        if _postgres():
            text, name = queries.get(word, (None, None))
            if text is None and name is not None:
                continue  # a stop word ("the", "for"): it asks nothing
            if text is not None:
                arm |= Q(
                    RawSQL(
                        f"{words_of_row} @@ to_tsquery({CONFIG}, %s)",
                        [text],
                        output_field=BooleanField(),
                    )
                )
                indexed_arm |= Q(
                    RawSQL(
                        # the array from an InitPlan, computed once (a scalar
                        # subquery, cast so ANY reads it as an array)
                        f'{TABLE}."id" = ANY((SELECT approvals_search_ids('
                        f"to_tsquery({CONFIG}, %s)))::uuid[])",
                        [text],
                        output_field=BooleanField(),
                    )
                )
        else:
            arm |= _plain_match(word)
        named = [key for key, title in kinds if word in key.casefold() or word in title.casefold()]
        people = _people_named(word, queries.get(word, (None, None))[1], tenant_id=tenant_id)
        others = ([Q(template_key__in=named)] if named else []) + (
            [Q(submitter_id__in=people)] if people else []
        )
        for other in others:
            arm |= other
            indexed_arm |= other
        condition &= arm
        if lookup is not None:
            lookup &= indexed_arm
        text = queries.get(word, (None, None))[0]
        if share is not None:
            share = None if named or people or text is None else min(share, _share(text))
    return WordsMatch(condition, share, lookup)


# The column's most common words and their shares of the workflows, as ANALYZE last
# found them (pg_stats), read at most once every STATISTICS_SECONDS per process.
STATISTICS_SECONDS = 300.0
_common: tuple[float, dict[str, float], float] | None = None


def _common_words() -> tuple[dict[str, float], float]:
    """The most common words' shares and the least of them (any other word's share is
    below it); nothing known before the first ANALYZE."""
    global _common
    now = time.monotonic()
    if _common is None or now - _common[0] > STATISTICS_SECONDS:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
                " WHERE schemaname = current_schema() AND tablename = 'approvals_workflow'"
                " AND attname = 'search_words'"
            )
            row = cur.fetchone()
        words, freqs = (row[0] or [], row[1] or []) if row else ([], [])
        shares = dict(zip(words, freqs, strict=False))
        # the frequencies are followed by their least, their most and the null share
        least = freqs[len(words)] if len(freqs) > len(words) else 1.0
        _common = (now, shares, least)
    return _common[1], _common[2]


def _share(text_query: str) -> float:
    """At most, the share of workflows whose words hold every lexeme of the query."""
    shares, least = _common_words()
    lexemes = re.findall(r"'([^']*)'", text_query)
    return min((shares.get(lexeme, least) for lexeme in lexemes), default=1.0)


def _people_named(word: str, query: str | None, *, tenant_id: int) -> list[int]:
    """The people of the organisation whose user name, first or last name has a word
    starting with ``word`` (on PostgreSQL, through the names' GIN index) or, on SQLite,
    holds it anywhere."""
    people = User.objects.filter(tenant_id=tenant_id)
    if _postgres():
        if query is None:
            return []
        if tenant_scope.acting_now() == tenant_id:
            # under the policy the names' index serves only the function (0043)
            with connection.cursor() as cur:
                cur.execute(
                    "SELECT unnest(approvals_people_named(to_tsquery('simple'::regconfig, %s)))",
                    [query],
                )
                return [row[0] for row in cur.fetchall()]
        named = RawSQL(
            f"{NAME_VECTOR} @@ to_tsquery('simple'::regconfig, %s)",
            [query],
            output_field=BooleanField(),
        )
        people = people.filter(named)
    else:
        people = people.filter(
            Q(username__icontains=word)
            | Q(first_name__icontains=word)
            | Q(last_name__icontains=word)
        )
    return list(people.values_list("pk", flat=True))


def created_order(*, newest: bool, words: bool = False) -> list[Any]:
    """The order by submission time, and the row's id to settle ties: the order of the
    index ``workflow_newest`` (tenant, created_at), so a page of a common word's matches
    walks it and stops at the page's end. A search by words never leaves the planner
    free to walk it for a rare word (its guess of an unknown word's share is 1 in 200,
    which walks every row of the organisation when the word is in one of them): it asks
    the newest rows first (``time_window``), and past them the matches alone
    (``matches_first``). ``words`` is kept for callers; the order is the same."""
    when = F("created_at")
    return [when.desc() if newest else when.asc(), "pk"]


def matches_first(qs: QuerySet[Workflow], *, newest: bool, limit: int, offset: int) -> list[Any]:
    """The ids of a page of ``qs`` (a search's matches, with its read rule) in time
    order, read as the matches first (through the text's GIN index, or the person's own
    ids), then their ids and times sorted: the cost is the matches', never a walk of the
    organisation's rows. On PostgreSQL a MATERIALIZED common table expression keeps the
    planner from pushing the order into the matches."""
    ordered = qs.order_by(*created_order(newest=newest)).values_list("pk", flat=True)
    if not _postgres():
        return list(ordered[offset : offset + limit])
    inner = qs.order_by().values_list("pk", "created_at")
    sql, params = inner.query.sql_with_params()
    direction = "DESC" if newest else "ASC"
    with connection.cursor() as cur:
        cur.execute(
            f"WITH m (id, created_at) AS MATERIALIZED ({sql})"
            f" SELECT id FROM m ORDER BY created_at {direction}, id LIMIT %s OFFSET %s",
            [*params, limit, offset],
        )
        return [row[0] for row in cur.fetchall()]


# How many of the newest rows a search by words asks first: at least WINDOW_MIN, and
# WINDOW_PER_ROW for each row up to the page's end. Their words are stored (migration
# 0040), so the page's query walks them newest first and stops at the page's end: a
# word in one request of 80 still fills a first page from them. The window's edge is
# read walking ``workflow_newest`` as far, so a small one keeps a rarer word's search
# (a reference, whose page the window cannot fill) from paying for it: 20,000 cost a
# reference's search 1.7 ms more at ten million events than at 100,000.
WINDOW_MIN = 2_000
WINDOW_PER_ROW = 50


def window_size(rows: int) -> int:
    return max(rows * WINDOW_PER_ROW, WINDOW_MIN)


def window_may_fill(share: float | None, *, rows: int) -> bool:
    """Whether the newest rows may hold a page of matches of words matching at most
    ``share`` of the workflows: a reference (``EXP-s00-0076469``, none of the common
    words) never fills one, and its search goes straight to its few matches."""
    return share is None or share * window_size(rows) >= rows


def time_window(tenant_id: int, *, newest: bool, rows: int) -> Q | None:
    """The organisation's newest (or oldest) workflows a search asks first, as a
    condition on the time (its edge read from ``workflow_newest``); None where that is
    all of them or on SQLite, where there is nothing to save."""
    if not _postgres():
        return None
    size = window_size(rows)
    times = Workflow.objects.filter(tenant_id=tenant_id).order_by(
        "-created_at" if newest else "created_at"
    )
    edge = times.values_list("created_at", flat=True)[size : size + 1]
    found = list(edge)
    if not found:
        return None
    return Q(created_at__gte=found[0]) if newest else Q(created_at__lte=found[0])


def amount_minor(fields: Sequence[str]) -> RawSQL:
    """The request's amount in minor units: the first of ``fields`` (its workflow
    template's money fields) that holds a number; NULL when none does. A field of that
    name holding text in another workflow template is passed over, never cast."""
    if not fields:
        return RawSQL("NULL", [], output_field=BigIntegerField())
    if _postgres():
        one = (
            f"CASE WHEN jsonb_typeof({TABLE}.\"data\" -> %s) = 'number'"
            f' THEN ({TABLE}."data" ->> %s)::numeric END'
        )
        params: list[Any] = [p for name in fields for p in (name, name)]
    else:
        one = (
            f"CASE WHEN json_type({TABLE}.\"data\", %s) IN ('integer', 'real')"
            f' THEN json_extract({TABLE}."data", %s) END'
        )
        paths = ['$."' + name.replace('"', '""') + '"' for name in fields]
        params = [p for path in paths for p in (path, path)]
    sql = "COALESCE(" + ", ".join([one] * len(fields)) + ")" if len(fields) > 1 else one
    return RawSQL(sql, params, output_field=BigIntegerField())


def decided_by(username: str) -> Exists:
    """The person recorded a decision on the workflow (approve, reject or send back),
    for themselves or for someone they stood in for."""
    return Exists(
        WorkflowEvent.objects.filter(
            workflow_id=OuterRef("pk"), type="DecisionRecorded", actor__username=username
        )
    )


# The events that end a workflow: the time of the last one is when it finished.
_ENDINGS = (
    "WorkflowCompleted",
    "WorkflowRejected",
    "WorkflowRolledBack",
    "CompensationFailed",
    "WorkflowCancelled",
)


def finished_at() -> Subquery:
    """When the workflow finished (NULL while it runs): one indexed read of its events."""
    return Subquery(
        WorkflowEvent.objects.filter(workflow_id=OuterRef("pk"), type__in=_ENDINGS)
        .order_by("-seq")
        .values("created_at")[:1]
    )
