"""What the search page does with its matches besides listing them: which page of them
it shows, and the whole result as a CSV file in people's words."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlencode

from django import forms

from ..audit.export import csv_lines
from ..runtime import replica
from ..selectors.search_text import finished_at
from . import present
from .search import PAGE_INVALID, PAGES_MAX, WorkflowSearch

CSV_COLUMNS = (
    "Reference",
    "Summary",
    "Amount",
    "Status",
    "Submitted by",
    "Started",
    "Finished",
)
CSV_CHUNK = 500


class PageForm(forms.Form):
    """The page of results asked for (the first when none is)."""

    page = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=PAGES_MAX,
        error_messages={
            "invalid": PAGE_INVALID,
            "min_value": PAGE_INVALID,
            "max_value": PAGE_INVALID,
        },
    )

    def number(self) -> int:
        return (self.cleaned_data.get("page") or 1) if self.is_valid() else 1


def page_links(query: Mapping[str, str], page: int, *, more: bool) -> dict[str, str]:
    """The addresses of the pages before and after ``page`` (absent at either end), and
    of the export of the whole result, each with the search's own parameters."""
    kept = {k: v for k, v in query.items() if k != "page"}
    links = {"export": "?" + urlencode(kept)}
    if page > 1:
        links["previous"] = "?" + urlencode({**kept, "page": page - 1})
    if more:
        links["next"] = "?" + urlencode({**kept, "page": page + 1})
    return links


def _moment(at: dt.datetime | None, zone: dt.tzinfo) -> str:
    """``2026-12-02 14:15+05:30``: in the person's zone, with its offset, so a
    spreadsheet elsewhere reads the same moment."""
    return at.astimezone(zone).isoformat(sep=" ", timespec="minutes") if at else ""


def _row(wf: Any, zone: dt.tzinfo) -> list[str]:
    submitter = wf.submitter
    name = (submitter.get_full_name() or submitter.username) if submitter else ""
    raw = wf.template.definition if isinstance(wf.template.definition, Mapping) else {}
    return [
        wf.subject_id,
        wf.summary,
        wf.amount_display,
        present.status_label(wf.public_status, raw),
        name,
        _moment(wf.created_at, zone),
        _moment(wf.finished_at, zone),
    ]


def search_csv(search: WorkflowSearch, *, zone: dt.tzinfo) -> Iterator[str]:
    """Every match of a valid search, in its order, as CSV lines read in chunks: the
    whole result, not a page, and only what the person may read (the search's own
    scope). ``zone`` is taken by the caller: the lines are made after the view returns."""
    qs = search.ordered().annotate(finished_at=finished_at())
    rows = replica.streamed_from_replica(
        lambda: (_row(wf, zone) for wf in qs.iterator(chunk_size=CSV_CHUNK))
    )
    return csv_lines(CSV_COLUMNS, rows)


def csv_filename(at: dt.datetime) -> str:
    return f"requests-{at:%Y%m%d-%H%M}.csv"
