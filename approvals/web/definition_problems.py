"""The problems publishing a workflow template would meet, in the admin's words: where
("Step 2, Finance"), then what, with durations as "days, hours or minutes" and no JSON
path or ISO 8601 text; and the anchor on the editor page of the part at fault."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from templates_engine import DefinitionError

from .duration_input import DURATION_INVALID
from .present import field_label, humanise, step_titles

_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")
_SETTING = {
    "when": "the condition",
    "deadline": "the deadline",
    "reminders": "a reminder",
    "duration": "the wait",
    "timeout": "the time limit",
    "approvers": "an approver",
    "escalate_to": "the escalation",
    "fallback": "the fallback",
    "on_reject": "what a rejection does",
    "quorum": "the quorum",
    "activity": "the activity",
    "compensate": "the undo activity",
}
_DURATIONS = ("deadline", "reminders", "duration", "timeout")
_DURATION_TEXT = re.compile(
    r"is not an ISO 8601 duration|must not be negative|must be a number of seconds or an ISO "
    r"8601 duration|uses months or years"
)
_LISTS = {"approvers": "approver", "reminders": "reminder", "fallback": "fallback"}
_VERB = re.compile(r"(must|is|are|uses|refers|names|has|may|cannot|does)\b")
_DATA_NAME = re.compile(r"data\.([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Problem:
    text: str
    anchor: str  # an id on the editor page


def _parts(path: str) -> list[str]:
    return [a or b for a, b in _PART.findall(path)]


def problem_words(problem: DefinitionError, definition: Mapping[str, Any]) -> Problem:
    """One problem as a sentence and the anchor of the part of the page at fault."""
    parts = _parts(problem.path)
    schema = definition.get("schema") if isinstance(definition.get("schema"), Mapping) else None
    what = problem.problem
    what = _DATA_NAME.sub(lambda m: field_label(schema, m[1]), what)
    steps = [s for s in definition.get("steps") or [] if isinstance(s, Mapping)]
    if (
        len(parts) >= 2
        and parts[0] == "steps"
        and parts[1].isdigit()
        and int(parts[1]) < len(steps)
    ):
        index = int(parts[1])
        step = steps[index]
        title = step_titles(definition).get(str(step.get("id")), f"step {index + 1}")
        where = f"Step {index + 1}, {title}"
        setting = parts[2] if len(parts) > 2 else ""
        if setting in _DURATIONS and _DURATION_TEXT.search(what):
            return Problem(f"{where}: " + DURATION_INVALID.format(what=_SETTING[setting]), "steps")
        anchor = "steps"
        if setting == "when":
            anchor = f"when-{step.get('id')}"
        if setting in _LISTS and len(parts) > 3 and parts[3].isdigit():
            where += f", {_LISTS[setting]} {int(parts[3]) + 1}"
            if parts[4:5] == ["when"]:
                anchor = f"when-{step.get('id')}-by-{parts[3]}"
                setting = "when"
            else:
                setting = ""
        if what.startswith("condition "):
            return Problem(f"{where}: the condition {what.removeprefix('condition ')}", anchor)
        noun = _SETTING.get(setting, humanise(setting).lower() if setting else "")
        if noun and _VERB.match(what):
            what = f"{noun} {what}"
        return Problem(f"{where}: {what}", anchor)
    if parts[:1] == ["schema"]:
        name = parts[2] if len(parts) > 2 and parts[1] == "properties" else ""
        label = field_label(schema, name) if name else "The data fields"
        return Problem(f"Data field {label}: {what}" if name else f"{label}: {what}", "steps")
    if parts:
        return Problem(f"{humanise(parts[0])}: {what}", "steps")
    return Problem(what[:1].upper() + what[1:], "steps")


def problems_in_words(
    problems: Sequence[DefinitionError], definition: Mapping[str, Any]
) -> list[Problem]:
    return [problem_words(p, definition) for p in problems]
