"""A workflow template's steps as a server-rendered SVG: a vertical flow of boxes from
start to end, each step's ``when`` condition on the edge into it, and the workflow's
position marked (done, skipped, current). No script, no CDN: plain markup styled by
app.css classes (the CSP allows no inline style)."""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Any

from django.utils.html import escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from .present import approver_lines, condition_words, step_titles

WIDTH = 420
BOX_W = 260
BOX_H = 44
GAP = 56  # room on each edge for its condition
KIND_WORDS = {"approval": "approval", "action": "automatic", "wait": "wait", "signal": "waits for"}


SUB_LINE = 15  # the height of each further line under a step's name
PILL_H = 28  # the start and the end
BOX_X = (WIDTH - BOX_W) // 2
CX = WIDTH // 2


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def workflow_svg(
    raw_definition: Mapping[str, Any],
    *,
    data: Mapping[str, Any],
    current: str | None = None,
    done: Set[str] = frozenset(),
    skipped: Set[str] = frozenset(),
    finished: bool = False,
    names: Mapping[str, str] | None = None,
    base: str = "",
) -> SafeString:
    """The diagram; ``names`` (username -> first name) words the people approval steps
    name, who are otherwise shown by username; amounts in conditions are in ``base``,
    the currency rules compare in (present.rule_amount)."""
    steps = [s for s in raw_definition.get("steps") or [] if isinstance(s, Mapping)]
    schema = (
        raw_definition.get("schema") if isinstance(raw_definition.get("schema"), Mapping) else None
    )
    look = _Look(
        titles=step_titles(raw_definition),
        schema=schema,
        data=data,
        base=base,
        names=names or {},
        current=current,
        done=done,
        skipped=skipped,
    )
    y = 8
    nodes = [_pill("Submitted", y, "terminal done")]
    y += PILL_H
    for step in steps:
        y = _step(step, y, look, nodes)
    nodes.append(_edge("edge", y, 30))
    y += 32
    nodes.append(_pill("Done", y, "terminal" + (" done" if finished else "")))
    y += PILL_H + 8
    title = escape(str(raw_definition.get("title") or "Workflow"))
    return mark_safe(_head(title, y) + "".join(nodes) + "</svg>")  # noqa: S308 - every value escaped


@dataclass(frozen=True)
class _Look:
    """What every step's box reads beside the step itself."""

    titles: Mapping[str, str]
    schema: Mapping[str, Any] | None
    data: Mapping[str, Any]
    base: str
    names: Mapping[str, str]
    current: str | None
    done: Set[str]
    skipped: Set[str]

    def state(self, sid: str) -> str:
        """Where the workflow is with the step: current, skipped, done, or not yet."""
        if sid == self.current:
            return "current"
        if sid in self.skipped:
            return "skipped"
        return "done" if sid in self.done else ""


def _step(step: Mapping[str, Any], y: int, look: _Look, nodes: list[str]) -> int:
    """The edge into ``step`` (with its condition) and the step's box, drawn from ``y``
    down; returns where the box ends."""
    sid = str(step.get("id"))
    cond = (
        condition_words(step.get("when"), look.schema, look.data, look.base)
        if step.get("when")
        else ""
    )
    nodes.append(_edge("edge skipped" if sid in look.skipped else "edge", y, GAP - 2))
    if cond:
        nodes.append(
            format_html(
                '<text class="cond" x="{}" y="{}">if {}</text>',
                CX + 8,
                y + GAP // 2 + 4,
                _trim(cond, 30),
            )
        )
    y += GAP
    subs = _sub_lines(step, look)
    height = BOX_H + SUB_LINE * (len(subs) - 1)
    nodes.append(_box(sid, cond, subs, y, height, look))
    return y + height


def _sub_lines(step: Mapping[str, Any], look: _Look) -> list[str]:
    """The lines under a step's name: for an approval, one for those always asked and
    one for each chosen by a condition; else what kind of step it is."""
    kind = str(step.get("kind", ""))
    if kind == "approval":
        return approver_lines(step, look.names, look.schema, look.data, look.base) or [""]
    return [KIND_WORDS.get(kind, kind)]


def _box(sid: str, cond: str, subs: list[str], y: int, height: int, look: _Look) -> str:
    state = look.state(sid)
    mark = {"current": " ◀ now", "done": " ✓", "skipped": " (skipped)"}.get(state, "")
    title = look.titles.get(sid, sid)
    return format_html(
        '<g class="node step {}" data-step="{}"><title>{}</title>'
        '<rect x="{}" y="{}" width="{}" height="{}" rx="6"/>'
        '<text x="{}" y="{}" text-anchor="middle" class="name">{}{}</text>{}</g>',
        state,
        sid,
        f"{title}: {cond or 'always'}" + "".join(f"; {line}" for line in subs[1:]),
        BOX_X,
        y,
        BOX_W,
        height,
        CX,
        y + 18,
        _trim(title, 28),
        mark,
        format_html_join(
            "",
            '<text x="{}" y="{}" text-anchor="middle" class="sub">{}</text>',
            ((CX, y + 35 + SUB_LINE * i, _trim(line, 40)) for i, line in enumerate(subs)),
        ),
    )


def _pill(label: str, y: int, cls: str) -> str:
    """The rounded start or end of the flow."""
    return format_html(
        '<g class="node {}"><rect x="{}" y="{}" width="{}" height="{}" rx="14"/>'
        '<text x="{}" y="{}" text-anchor="middle">{}</text></g>',
        cls,
        CX - 60,
        y,
        120,
        PILL_H,
        CX,
        y + 19,
        label,
    )


def _edge(cls: str, y: int, length: int) -> str:
    return format_html(
        '<line class="{}" x1="{}" y1="{}" x2="{}" y2="{}" marker-end="url(#arrow)"/>',
        cls,
        CX,
        y,
        CX,
        y + length,
    )


def _head(title: str, height: int) -> str:
    """The svg element (sized to the flow) and the arrowhead its edges end in."""
    return (
        f'<svg class="diagram" role="img" aria-label="Steps of {title}" '
        f'viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        'xmlns="http://www.w3.org/2000/svg">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z"/></marker></defs>'
    )
