"""A workflow template's steps as a server-rendered SVG: a vertical flow of boxes from
start to end, each step's ``when`` condition on the edge into it, and the workflow's
position marked (done, skipped, current). No script, no CDN: plain markup styled by
app.css classes (the CSP allows no inline style)."""

from __future__ import annotations

from collections.abc import Mapping, Set
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
    titles = step_titles(raw_definition)
    schema = (
        raw_definition.get("schema") if isinstance(raw_definition.get("schema"), Mapping) else None
    )
    x = (WIDTH - BOX_W) // 2
    cx = WIDTH // 2
    nodes: list[str] = []
    y = 8
    start_h = 28

    def pill(label: str, y0: int, cls: str) -> str:
        return format_html(
            '<g class="node {}"><rect x="{}" y="{}" width="{}" height="{}" rx="14"/>'
            '<text x="{}" y="{}" text-anchor="middle">{}</text></g>',
            cls,
            cx - 60,
            y0,
            120,
            start_h,
            cx,
            y0 + 19,
            label,
        )

    nodes.append(pill("Submitted", y, "terminal done"))
    y += start_h
    for step in steps:
        sid = str(step.get("id"))
        cond = condition_words(step.get("when"), schema, data, base) if step.get("when") else ""
        edge_cls = "edge skipped" if sid in skipped else "edge"
        nodes.append(
            format_html(
                '<line class="{}" x1="{}" y1="{}" x2="{}" y2="{}" marker-end="url(#arrow)"/>',
                edge_cls,
                cx,
                y,
                cx,
                y + GAP - 2,
            )
        )
        if cond:
            nodes.append(
                format_html(
                    '<text class="cond" x="{}" y="{}">if {}</text>',
                    cx + 8,
                    y + GAP // 2 + 4,
                    _trim(cond, 30),
                )
            )
        y += GAP
        state = (
            "current"
            if sid == current
            else "skipped"
            if sid in skipped
            else "done"
            if sid in done
            else ""
        )
        kind = str(step.get("kind", ""))
        if kind == "approval":
            # one line for those always asked, one for each chosen by a condition
            subs = approver_lines(step, names or {}, schema, data, base) or [""]
        else:
            subs = [KIND_WORDS.get(kind, kind)]
        height = BOX_H + SUB_LINE * (len(subs) - 1)
        mark = {"current": " ◀ now", "done": " ✓", "skipped": " (skipped)"}.get(state, "")
        nodes.append(
            format_html(
                '<g class="node step {}" data-step="{}"><title>{}</title>'
                '<rect x="{}" y="{}" width="{}" height="{}" rx="6"/>'
                '<text x="{}" y="{}" text-anchor="middle" class="name">{}{}</text>{}</g>',
                state,
                sid,
                f"{titles.get(sid, sid)}: {cond or 'always'}"
                + "".join(f"; {line}" for line in subs[1:]),
                x,
                y,
                BOX_W,
                height,
                cx,
                y + 18,
                _trim(titles.get(sid, sid), 28),
                mark,
                format_html_join(
                    "",
                    '<text x="{}" y="{}" text-anchor="middle" class="sub">{}</text>',
                    ((cx, y + 35 + SUB_LINE * i, _trim(line, 40)) for i, line in enumerate(subs)),
                ),
            )
        )
        y += height
    nodes.append(
        format_html(
            '<line class="edge" x1="{}" y1="{}" x2="{}" y2="{}" marker-end="url(#arrow)"/>',
            cx,
            y,
            cx,
            y + 30,
        )
    )
    y += 32
    nodes.append(pill("Done", y, "terminal" + (" done" if finished else "")))
    y += start_h + 8
    title = escape(str(raw_definition.get("title") or "Workflow"))
    head = (
        f'<svg class="diagram" role="img" aria-label="Steps of {title}" '
        f'viewBox="0 0 {WIDTH} {y}" width="{WIDTH}" height="{y}" xmlns="http://www.w3.org/2000/svg">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0 L10,5 L0,10 z"/></marker></defs>'
    )
    return mark_safe(head + "".join(nodes) + "</svg>")  # noqa: S308 - every value escaped above
