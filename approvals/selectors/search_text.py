"""The search's questions of a workflow's own columns: its words, its amount and who
decided it. Each answers with a condition (a ``Q`` or an expression) for the search to
combine with the read rule, so one query serves the page, the API and the export.

Words: a full-text match over the column of words that the GIN index
``workflow_search_words`` (migrations 0026 and 0040) indexes, each word asked as a
prefix of the words there (the reference, the summary and every string in the data,
keys left out)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

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
from django.db.models.functions import Coalesce

from ..models import User, Workflow, WorkflowEvent
from ..runtime import replica
from ..runtime.archived import archived_in_place

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
    with replica.read_connection().cursor() as cur:
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


WordQueries = dict[str, tuple[str | None, str | None]]


def word_queries(words: Sequence[str]) -> WordQueries:
    """The ``tsquery`` values of each word (``_queries``), for a form to check them
    (``unsearchable``) and hand them on to ``words_match``."""
    return _queries(words) if words else {}


def unsearchable(queries: WordQueries) -> list[str]:
    """The words PostgreSQL's parser finds no lexeme in (``_``, ``²``, ``_-_``): they
    have a letter or digit to Python but ask nothing of the index, and a match of
    nothing cannot be put in a query (Django's ``EmptyResultSet``). A stop word has its
    name lexemes and is no such word."""
    return [word for word, (text, name) in queries.items() if text is None and name is None]


class WordsMatch(NamedTuple):
    condition: Q
    # The words' text as one ``tsquery`` (each word's stems ANDed), when the text is all
    # a match may hold (no word names a kind or a person): ``window_may_fill`` asks how
    # common it is. None otherwise.
    text: str | None
    # The same words asked of the GIN index through ``approvals_search_ids`` (migration
    # 0043), for a query that reads the matches first while the transaction acts for
    # the organisation: under its policy the index cannot serve ``condition``. ANDed
    # with ``condition``, which then only checks the rows the index found. None but
    # ``under_policy`` (and for ``indexed=False``).
    lookup: Q | None = None


def words_match(
    words: Sequence[str],
    *,
    tenant_id: int,
    kinds: Iterable[tuple[str, str]],
    indexed: bool = True,
    under_policy: bool = False,
    queries: WordQueries | None = None,
) -> WordsMatch:
    """Every word in the workflow's text, the kind of request (its key or title) or the
    submitter's name. The kinds and the people a word names are looked up first, so the
    condition on workflows is indexed throughout (the text's GIN index, and the tenant's
    submitter and kind indexes) and PostgreSQL can combine the three in a BitmapOr.

    ``indexed=False`` for a search among rows already few (a person's own, by id): the
    words are then tested on those rows, never read from the GIN index, whose list of a
    common word holds its matches in every organisation (56,000 rows for "hotel" at ten
    million events, read to keep 15 of a person's 182).

    ``under_policy``: the transaction acts for ``tenant_id`` (row-level security), where
    the indexes serve only the functions of migration 0043 (``WordsMatch.lookup``,
    ``approvals_people_named``). ``queries``: the words' ``word_queries`` when the
    caller has them already; the caller refuses the words in ``unsearchable`` first."""
    words_of_row = VECTOR if indexed else f"COALESCE({VECTOR}, ''::tsvector)"
    # Under the policy no index serves the match in either form, and PostgreSQL, which
    # may not read the column's statistics there, estimates ``@@`` at 0.5% of the rows:
    # it took a common word's page among the newest 2,000 rows for ten matches, and
    # sorted every match of them instead of walking them newest first and stopping at
    # the page's end. The function behind ``@@`` is estimated at a third of the rows
    # (and the window's query reads the page's ids alone: WorkflowSearch.results).
    match = "ts_match_vq" if under_policy else ""
    kinds = list(kinds)
    if queries is None:
        queries = word_queries(words)
    condition = Q()
    lookup: Q | None = Q() if indexed and under_policy else None
    texts: list[str] | None = []
    for word in words:
        arm = _NONE
        # the same arm with its text asked through the function (``lookup``)
        indexed_arm = _NONE
        text, name = queries.get(word, (None, None))
        if text is None and name is not None:
            continue  # a stop word ("the", "for"): it asks nothing
        if text is not None:
            by_text, by_index = _text_arms(text, words_of_row, match)
            arm |= by_text
            indexed_arm |= by_index
        others = _kinds_and_people(word, name, kinds, tenant_id, under_policy)
        for other in others:
            arm |= other
            indexed_arm |= other
        condition &= arm
        if lookup is not None:
            lookup &= indexed_arm
        if texts is not None:
            texts = None if others or text is None else [*texts, text]
    return WordsMatch(condition, " & ".join(texts) if texts else None, lookup)


def _kinds_and_people(
    word: str,
    name: str | None,
    kinds: list[tuple[str, str]],
    tenant_id: int,
    under_policy: bool,
) -> list[Q]:
    """The kinds of request (by key or title) and the submitters (by ``name``, the
    word's name lexemes) a word names, as conditions on workflows; [] when none."""
    named = [key for key, title in kinds if word in key.casefold() or word in title.casefold()]
    people = _people_named(word, name, tenant_id=tenant_id, under_policy=under_policy)
    return ([Q(template_key__in=named)] if named else []) + (
        [Q(submitter_id__in=people)] if people else []
    )


def _text_arms(text: str, words_of_row: str, match: str) -> tuple[Q, Q]:
    """A word's ``tsquery`` ``text`` asked of the row's words (through ``match`` when it
    is given: under the policy), and the same asked of the GIN index through
    ``approvals_search_ids`` (for ``WordsMatch.lookup``)."""
    by_text = Q(
        RawSQL(
            f"{match}({words_of_row}, to_tsquery({CONFIG}, %s))"
            if match
            else f"{words_of_row} @@ to_tsquery({CONFIG}, %s)",
            [text],
            output_field=BooleanField(),
        )
    )
    by_index = Q(
        RawSQL(
            # the array from an InitPlan, computed once (a scalar subquery, cast so ANY
            # reads it as an array)
            f'{TABLE}."id" = ANY((SELECT approvals_search_ids(to_tsquery({CONFIG}, %s)))::uuid[])',
            [text],
            output_field=BooleanField(),
        )
    )
    return by_text, by_index


# The words common among an organisation's newest workflows (as many as a search's
# smallest window asks first, WINDOW_MIN), each with its share of them: read with
# ``ts_stat``, under the organisation's own policy, at most once every COMMON_SECONDS
# per process and organisation. Words in fewer than COMMON_MIN_ROWS of them are left out
# (their share is taken as nil: too rare to fill a page from the window).
COMMON_MIN_ROWS = 10
COMMON_SECONDS = 600.0
_common: dict[int, tuple[float, dict[str, float]]] = {}


def common_words(tenant_id: int) -> dict[str, float]:
    """The organisation's common words and their shares of its newest workflows.

    Why not the column's statistics (pg_stats): PostgreSQL shows them only to a
    superuser once a table has row-level security (to every other role, the policy hides
    them), and they are shared by every organisation. About 30 ms for 2,000 rows, once
    per ten minutes."""
    now = time.monotonic()
    known = _common.get(tenant_id)
    if known is not None and now - known[0] <= COMMON_SECONDS:
        return known[1]
    newest = (
        f'SELECT "search_words" FROM {TABLE} WHERE "tenant_id" = {int(tenant_id)}'
        f' ORDER BY "created_at" DESC LIMIT {int(WINDOW_MIN)}'
    )
    with replica.read_connection().cursor() as cur:
        cur.execute(
            "SELECT word, ndoc FROM ts_stat(%s) WHERE ndoc >= %s", [newest, COMMON_MIN_ROWS]
        )
        shares = {word: ndoc / WINDOW_MIN for word, ndoc in cur.fetchall()}
    _common[tenant_id] = (now, shares)
    return shares


def text_share(text: str, *, tenant_id: int) -> float:
    """At most, the share of the organisation's newest workflows whose words hold every
    lexeme of ``text`` (a ``WordsMatch.text``)."""
    shares = common_words(tenant_id)
    lexemes = re.findall(r"'([^']*)'", text)
    return min((shares.get(lexeme, 0.0) for lexeme in lexemes), default=1.0)


def _people_named(word: str, query: str | None, *, tenant_id: int, under_policy: bool) -> list[int]:
    """The people of the organisation whose user name, first or last name has a word
    starting with ``word`` (``query``, its lexemes), through the names' GIN index."""
    if query is None:
        return []
    if under_policy:
        # under the policy the names' index serves only the function (0043)
        with replica.read_connection().cursor() as cur:
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
    return list(User.objects.filter(tenant_id=tenant_id).filter(named).values_list("pk", flat=True))


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
    organisation's rows. A MATERIALIZED common table expression keeps the planner from
    pushing the order into the matches."""
    inner = qs.order_by().values_list("pk", "created_at")
    sql, params = inner.query.sql_with_params()
    direction = "DESC" if newest else "ASC"
    with replica.read_connection().cursor() as cur:
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


def window_may_fill(text: str | None, *, tenant_id: int, rows: int) -> bool:
    """Whether the organisation's newest rows may hold a page of the words' matches:
    ``text`` is ``WordsMatch.text`` (None: the words may match otherwise, by a kind or a
    person they name). A reference (``EXP-s00-0076469``, none of the common words) never
    fills one, and its search goes straight to its few matches."""
    if text is None:
        return True
    return text_share(text, tenant_id=tenant_id) * window_size(rows) >= rows


def time_window(tenant_id: int, *, newest: bool, rows: int) -> Q | None:
    """The organisation's newest (or oldest) workflows a search asks first, as a
    condition on the time (its edge read from ``workflow_newest``); None where that is
    all of them."""
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
    one = (
        f"CASE WHEN jsonb_typeof({TABLE}.\"data\" -> %s) = 'number'"
        f' THEN ({TABLE}."data" ->> %s)::numeric END'
    )
    params: list[Any] = [p for name in fields for p in (name, name)]
    sql = "COALESCE(" + ", ".join([one] * len(fields)) + ")" if len(fields) > 1 else one
    return RawSQL(sql, params, output_field=BigIntegerField())


def decided_by(username: str) -> Q:
    """The person recorded a decision on the workflow (approve, reject or send back),
    for themselves or for someone they stood in for."""
    live = Exists(
        WorkflowEvent.objects.filter(
            workflow_id=OuterRef("pk"), type="DecisionRecorded", actor__username=username
        )
    )
    # an archived workflow's deciders are its index row's (approvals.audit.archived)
    archived = Exists(
        archived_in_place().filter(
            tenant_id=OuterRef("tenant_id"),
            workflow_id=OuterRef("pk"),
            deciders__contains=[username],
        )
    )
    return live | archived


# The events that end a workflow: the time of the last one is when it finished.
_ENDINGS = (
    "WorkflowCompleted",
    "WorkflowRejected",
    "WorkflowRolledBack",
    "CompensationFailed",
    "WorkflowCancelled",
)


def finished_at() -> Coalesce:
    """When the workflow finished (NULL while it runs): one indexed read of its events,
    or of its archive index row once its events are archived."""
    live = Subquery(
        WorkflowEvent.objects.filter(workflow_id=OuterRef("pk"), type__in=_ENDINGS)
        .order_by("-seq")
        .values("created_at")[:1]
    )
    archived = Subquery(
        archived_in_place()
        .filter(tenant_id=OuterRef("tenant_id"), workflow_id=OuterRef("pk"))
        .values("finished_at")[:1]
    )
    return Coalesce(live, archived)
