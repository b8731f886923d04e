"""Charts drawn on the server as SVG: no script, no style attribute (the pages'
Content-Security-Policy allows neither inline), colours as presentation attributes.
Each chart is a picture of a table the page also shows (for screen readers and for
anyone who wants the numbers), so the SVG is an ``img`` with a short title."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

INK = "#1f2937"
GRID = "#d1d5db"
BLUE = "#2f5fb3"
ORANGE = "#b45309"
GREEN = "#15803d"
RED = "#b91c1c"
GREY = "#6b7280"
_LABEL_CHARS = 32


@dataclass(frozen=True)
class Segment:
    value: float
    colour: str
    words: str  # the value as people read it, for the bar's tooltip


@dataclass(frozen=True)
class Series:
    name: str
    colour: str


def _clip(label: str) -> str:
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"


def _open(chart_id: str, title: str, width: int, height: int) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img"'
        f' aria-labelledby="{chart_id}-t" viewBox="0 0 {width} {height}"'
        f' width="100%" preserveAspectRatio="xMinYMin meet">',
        f'<title id="{chart_id}-t">{escape(title)}</title>',
    ]


def _legend(series: Sequence[Series], x: float, y: float) -> list[str]:
    out = []
    for s in series:
        out.append(f'<rect x="{x:.0f}" y="{y - 10:.0f}" width="12" height="12" fill="{s.colour}"/>')
        at = f'x="{x + 16:.0f}" y="{y:.0f}"'
        out.append(f'<text {at} fill="{INK}" font-size="12">{escape(s.name)}</text>')
        x += 24 + 7 * len(s.name)
    return out


def columns(
    chart_id: str, title: str, labels: Sequence[str], values: Sequence[int], *, unit: str
) -> SafeString:
    """Vertical bars, one per label (weeks), with the largest value on the axis."""
    width, height, left, bottom, top = 460, 220, 36, 34, 12
    plot_w, plot_h = width - left - 10, height - bottom - top
    top_value = max([*values, 1])
    n = max(len(values), 1)
    step = plot_w / n
    bar = max(step * 0.7, 1.0)
    out = _open(chart_id, title, width, height)
    out.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 10}" y2="{top + plot_h}"'
        f' stroke="{GRID}"/>'
    )
    out.append(
        f'<text x="{left - 6}" y="{top + 4}" fill="{INK}" font-size="11"'
        f' text-anchor="end">{top_value}</text>'
    )
    out.append(
        f'<text x="{left - 6}" y="{top + plot_h}" fill="{INK}" font-size="11"'
        f' text-anchor="end">0</text>'
    )
    every = max(1, (n + 7) // 8)  # at most eight labels under the axis
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        h = plot_h * value / top_value
        x = left + i * step + (step - bar) / 2
        out.append(
            f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar:.1f}" height="{h:.1f}"'
            f' fill="{BLUE}"><title>{escape(label)}: {value} {escape(unit)}</title></rect>'
        )
        if i % every == 0:
            out.append(
                f'<text x="{x + bar / 2:.1f}" y="{top + plot_h + 16}" fill="{INK}"'
                f' font-size="11" text-anchor="middle">{escape(label)}</text>'
            )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text in it is escaped above


def bars(
    chart_id: str,
    title: str,
    rows: Sequence[tuple[str, Sequence[Segment]]],
    series: Sequence[Series],
    *,
    stacked: bool,
) -> SafeString:
    """Horizontal bars, one group per labelled row: side by side (``stacked`` False,
    scaled to the largest value) or stacked to a whole (shares that add up to 1)."""
    label_w, width, row_h, top = 230, 640, 30 if stacked else 38, 28
    plot_w = width - label_w - 16
    height = top + row_h * max(len(rows), 1) + 8
    largest = max([s.value for _, segs in rows for s in segs] + [1e-9])
    out = _open(chart_id, title, width, height)
    out.extend(_legend(series, label_w, 14))
    for i, (label, segments) in enumerate(rows):
        y = top + i * row_h
        out.append(
            f'<text x="{label_w - 8}" y="{y + row_h / 2 + 4:.0f}" fill="{INK}" font-size="12"'
            f' text-anchor="end">{escape(_clip(label))}<title>{escape(label)}</title></text>'
        )
        x = float(label_w)
        thick = (row_h - 10) / (1 if stacked else max(len(segments), 1))
        for j, s in enumerate(segments):
            w = plot_w * (s.value if stacked else s.value / largest)
            yy = y + 5 + (0 if stacked else j * thick)
            out.append(
                f'<rect x="{x:.1f}" y="{yy:.1f}" width="{max(w, 0):.1f}" height="{thick:.1f}"'
                f' fill="{s.colour}"><title>{escape(label)}: {escape(s.words)}</title></rect>'
            )
            if stacked:
                x += w
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text in it is escaped above
