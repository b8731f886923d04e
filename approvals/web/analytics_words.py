"""The analytics page's figures in people's words: durations ("2 days 3 hours"),
shares ("62%"), steps and kinds of request by their titles, weeks by their Monday;
and the same rows as the CSV downloads carry."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from templates_engine.state import SUBMITTER_STEP

from ..audit.pages import _number as number
from ..runtime.analytics import APPROVAL
from ..selectors.analytics import OpenVisit, StepFigures
from ..words import zones
from . import charts, present

_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60))
CHANGES_TITLE = "Back with the submitter for changes"
KIND_WORDS = {
    "approval": "Approval",
    "changes": "Changes by the submitter",
    "wait": "Waiting time",
    "signal": "Waiting for another system",
}


def span_words(span: dt.timedelta | None) -> str:
    """``2 days 3 hours``: the two largest units; ``under a minute``; "—" for none."""
    if span is None:
        return "—"
    left = int(span.total_seconds())
    parts = []
    for unit, size in _UNITS:
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count} {unit}{'' if count == 1 else 's'}")
    return " ".join(parts[:2]) or "under a minute"


def share_words(share: float | None) -> str:
    return "—" if share is None else f"{round(share * 100)}%"


def week_words(monday: dt.date) -> str:
    return f"{monday.day} {monday:%b %Y}"


@dataclass(frozen=True)
class Kind:
    """One workflow template as the page names it: its title and its steps' titles,
    from its newest version."""

    title: str
    steps: Mapping[str, str] = field(default_factory=dict)
    enums: Mapping[str, tuple[str, list[str]]] = field(
        default_factory=dict
    )  # name -> label, values

    def step(self, step: str) -> str:
        if step == SUBMITTER_STEP:
            return CHANGES_TITLE
        return self.steps.get(step) or present.humanise(step)


def kind_of(title: str, raw: Mapping[str, Any]) -> Kind:
    schema = raw.get("schema") if isinstance(raw.get("schema"), Mapping) else None
    props = (schema or {}).get("properties") or {}
    enums = {
        name: (present.field_label(schema, name), [str(v) for v in spec["enum"]])
        for name, spec in props.items()
        if isinstance(spec, Mapping) and isinstance(spec.get("enum"), list)
    }
    return Kind(title=title, steps=present.step_titles(raw), enums=enums)


@dataclass(frozen=True)
class StepRow:
    kind: str
    step: str
    step_kind: str
    visits: str
    approved: str
    rejected: str
    sent_back: str
    median: str
    p90: str
    breached: str
    escalated: str
    waiting: str
    figures: StepFigures

    def cells(self) -> list[str]:
        return [
            self.kind,
            self.step,
            self.step_kind,
            self.visits,
            self.approved,
            self.rejected,
            self.sent_back,
            self.median,
            self.p90,
            self.breached,
            self.escalated,
            self.waiting,
        ]


STEP_COLUMNS = [
    "Kind of request",
    "Step",
    "Kind of step",
    "Visits",
    "Approved",
    "Rejected",
    "Sent back",
    "Median wait",
    "90% waited at most",
    "Deadline breaches",
    "Escalations",
    "Waiting now",
]


def step_rows(figures: Iterable[StepFigures], kinds: Mapping[str, Kind]) -> list[StepRow]:
    out = []
    for f in figures:
        kind = kinds.get(f.template_key) or Kind(present.humanise(f.template_key))
        decided = f.kind == APPROVAL
        out.append(
            StepRow(
                kind=kind.title,
                step=kind.step(f.step),
                step_kind=KIND_WORDS.get(f.kind, present.humanise(f.kind)),
                visits=number(f.visits),
                approved=share_words(f.rate(f.completed)) if decided else "—",
                rejected=share_words(f.rate(f.rejected)) if decided else "—",
                sent_back=share_words(f.rate(f.sent_back)) if decided else "—",
                median=span_words(f.median),
                p90=span_words(f.p90),
                breached=number(f.breached),
                escalated=number(f.escalated),
                waiting=number(f.waiting),
                figures=f,
            )
        )
    return out


def slowest(rows: Sequence[StepRow], n: int = 5) -> list[StepRow]:
    """The steps with the longest median wait, longest first."""
    timed = [r for r in rows if r.figures.median is not None]
    return sorted(timed, key=lambda r: r.figures.median or dt.timedelta(), reverse=True)[:n]


def wait_chart(rows: Sequence[StepRow]) -> Any:
    series = [charts.Series("Median", charts.BLUE), charts.Series("90% within", charts.ORANGE)]
    return charts.bars(
        "waits",
        "Time waited at each step: median and the time 90% of visits waited at most",
        [
            (
                f"{r.kind}: {r.step}",
                [
                    charts.Segment(_hours(r.figures.median), charts.BLUE, f"median {r.median}"),
                    charts.Segment(_hours(r.figures.p90), charts.ORANGE, f"90% within {r.p90}"),
                ],
            )
            for r in rows
            if r.figures.median is not None
        ],
        series,
        stacked=False,
    )


def outcome_chart(rows: Sequence[StepRow]) -> Any:
    series = [
        charts.Series("Approved", charts.GREEN),
        charts.Series("Rejected", charts.RED),
        charts.Series("Sent back", charts.ORANGE),
        charts.Series("Other", charts.GREY),
    ]
    drawn = []
    for r in rows:
        f = r.figures
        ended = f.visits - f.waiting
        if f.kind != APPROVAL or not ended:
            continue
        other = ended - f.completed - f.rejected - f.sent_back
        parts = [(f.completed, charts.GREEN, "approved"), (f.rejected, charts.RED, "rejected")]
        parts += [(f.sent_back, charts.ORANGE, "sent back"), (other, charts.GREY, "other")]
        drawn.append(
            (
                f"{r.kind}: {r.step}",
                [
                    charts.Segment(n / ended, c, f"{share_words(n / ended)} {w}")
                    for n, c, w in parts
                ],
            )
        )
    return charts.bars(
        "outcomes",
        "How approval steps ended: approved, rejected, sent back",
        drawn,
        series,
        stacked=True,
    )


def _hours(span: dt.timedelta | None) -> float:
    return span.total_seconds() / 3600 if span is not None else 0.0


@dataclass(frozen=True)
class OpenRow:
    workflow_id: Any
    request: str
    kind: str
    step: str
    since: str
    waited: str
    deadline: str

    def cells(self) -> list[str]:
        return [self.request, self.kind, self.step, self.since, self.waited, self.deadline]


OPEN_COLUMNS = ["Request", "Kind of request", "Step", "Waiting since", "Waited", "Deadline"]


def open_rows(
    visits: Iterable[OpenVisit], kinds: Mapping[str, Kind], now: dt.datetime
) -> list[OpenRow]:
    out = []
    for v in visits:
        kind = kinds.get(v.template_key) or Kind(present.humanise(v.template_key))
        if v.due_at is None:
            deadline = "None"
        elif v.due_at < now:
            deadline = f"Passed {span_words(now - v.due_at)} ago"
        else:
            deadline = f"In {span_words(v.due_at - now)}"
        out.append(
            OpenRow(
                workflow_id=v.workflow_id,
                request=v.summary or kind.title,
                kind=kind.title,
                step=kind.step(v.step),
                since=present.when(v.entered_at),
                waited=span_words(now - v.entered_at),
                deadline=deadline,
            )
        )
    return out


WEEK_COLUMNS = ["Week starting", "Requests started"]


def week_rows(
    counts: Iterable[tuple[dt.date, str, int]], start: dt.date, end: dt.date
) -> list[tuple[dt.date, int]]:
    """Every week of the period (by its Monday), with the requests started in it."""
    by_week: dict[dt.date, int] = {}
    for monday, _key, n in counts:
        by_week[monday] = by_week.get(monday, 0) + n
    monday = start - dt.timedelta(days=start.weekday())
    out = []
    while monday <= end:
        out.append((monday, by_week.get(monday, 0)))
        monday += dt.timedelta(days=7)
    return out


def volume_chart(weeks: Sequence[tuple[dt.date, int]]) -> Any:
    return charts.columns(
        "volume",
        "Requests started each week",
        [zones.day_month(m) for m, _ in weeks],
        [n for _, n in weeks],
        unit="requests",
    )
