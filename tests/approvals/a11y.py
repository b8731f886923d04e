"""axe-core (WCAG 2.1 A and AA) on a page open in the browser tests.

    from tests.approvals.a11y import assert_accessible
    assert_accessible(page, "the inbox")

axe-core comes with axe-playwright-python (pinned); it is injected through the DevTools
protocol, so the pages' Content-Security-Policy stays as it is in production.
"""

from __future__ import annotations

from typing import Any

WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# axe's own rules beyond WCAG: a page's one h1, roles allowed on an element, a header
# cell with text.
BEST_PRACTICE = ["best-practice"]


def violations(page: Any, *, best_practice: bool = False) -> list[dict[str, Any]]:
    from axe_playwright_python.sync_playwright import Axe

    tags = WCAG_21_AA + (BEST_PRACTICE if best_practice else [])
    options = {"runOnly": {"type": "tag", "values": tags}, "resultTypes": ["violations"]}
    result = Axe().run(page, options=options)
    found: list[dict[str, Any]] = result.response["violations"]
    return found


def describe(found: list[dict[str, Any]]) -> str:
    lines = []
    for v in found:
        targets = [", ".join(node["target"]) for node in v["nodes"][:5]]
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} at {'; '.join(targets)}")
    return "\n".join(lines)


def assert_accessible(page: Any, what: str) -> None:
    found = violations(page)
    assert not found, f"axe-core finds {len(found)} violation(s) on {what}:\n{describe(found)}"
