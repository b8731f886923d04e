"""A "try it" run of a workflow template in words: one row per moment, with when it
happens (after the start, and on the calendar), the step, and what happens."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..selectors.template_trial import Trial, TrialEntry
from .present import approver_reason, approver_rule_words, person, step_title, when

_OUTCOMES = {
    "WorkflowCompleted": "Finished: approved",
    "WorkflowRejected": "Finished: rejected",
    "WorkflowRolledBack": "Finished: a step failed and the steps before it were undone",
}
# How a run ends, in the heading: never the engine's status name.
TRIAL_ENDS = {
    "COMPLETED": "approved",
    "REJECTED": "rejected",
    "ROLLED_BACK": "not completed: a step failed and the steps before it were undone",
    "COMPENSATION_FAILED": "not completed: a step failed and an undo failed too",
    "CANCELLED": "cancelled",
}
UNFINISHED = "unfinished: it stops on the way"


def trial_end(status: str) -> str:
    """``"ROLLED_BACK"`` -> ``not completed: a step failed and ...``."""
    return TRIAL_ENDS.get(status, UNFINISHED)


@dataclass(frozen=True)
class TrialRow:
    after: str
    at: str
    step: str
    what: str
    css: str


def after_words(seconds: float) -> str:
    """``2 days 4 hours`` after the start; ``at once`` for none."""
    minutes = int(seconds // 60)
    days, hours, mins = minutes // 1440, minutes % 1440 // 60, minutes % 60
    parts = [
        f"{n} {unit}{'' if n == 1 else 's'}"
        for n, unit in ((days, "day"), (hours, "hour"), (mins, "minute"))
        if n
    ]
    return " ".join(parts) if parts else "at once"


def trial_usernames(trial: Trial) -> set[str]:
    """Every username a trial names, so their names can be fetched in one query."""
    out: set[str] = set()
    for entry in trial.entries:
        out.update(entry.users or entry.people)
        out.update(b for b in entry.behalf if b)
    return out


def _listed(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words) or "no one"
    return ", ".join(words[:-1]) + " and " + words[-1]


def _people(entry: TrialEntry, names: Mapping[str, str]) -> str:
    """The people of an entry by their names; one asked for an absent approver is
    ``Ivan (for Bob)``."""
    if entry.users:
        behalf = entry.behalf or ("",) * len(entry.users)
        return _listed(
            [
                person(u, names) + (f" (for {person(b, names)})" if b else "")
                for u, b in zip(entry.users, behalf, strict=False)
            ]
        )
    return _listed([person(u, names) for u in entry.people])


def _excluded(note: str, names: Mapping[str, str]) -> str:
    """``bob: why; victor: why`` with each person by their name."""
    parts = []
    for part in note.split("; "):
        username, _, why = part.partition(": ")
        parts.append(f"{person(username, names)}: {why}" if why else part)
    return "; ".join(parts)


def _chosen_by_rules(
    entry: TrialEntry, raw_definition: Mapping[str, Any], names: Mapping[str, str], base: str
) -> str:
    """For an approval step whose approvers carry conditions: who a condition chose,
    and who it left out for this data (``; victor as the amount is above Rs ...``)."""
    if entry.kind != "asked":
        return ""
    step = next(
        (
            s
            for s in raw_definition.get("steps") or []
            if isinstance(s, Mapping) and s.get("id") == entry.step
        ),
        {},
    )
    rules = [r for r in step.get("approvers") or [] if isinstance(r, Mapping)]
    schema = (
        raw_definition.get("schema") if isinstance(raw_definition.get("schema"), Mapping) else None
    )
    parts = []
    for slot, rule in enumerate(rules):
        condition = rule.get("when")
        if not isinstance(condition, str) or not condition:
            continue
        reason = approver_reason(condition, schema, {}, base)
        asked = [p for p, s in zip(entry.users, entry.slots, strict=False) if s == slot]
        if asked:
            parts.append(f"{_listed([person(u, names) for u in asked])} as {reason}")
        else:
            who = approver_rule_words(rule, names)
            parts.append(f"not {who}: only when {reason}")
    return "".join(f"; {part}" for part in parts)


def _what(entry: TrialEntry, names: Mapping[str, str]) -> str:  # noqa: PLR0911
    """One sentence per kind."""
    mode = {"all": "all must approve", "quorum": "a quorum must approve"}
    match entry.kind:
        case "started":
            return f"Submitted by {_people(entry, names)}"
        case "skipped":
            return "Skipped: its condition is not met"
        case "asked":
            return f"Asks {_people(entry, names)}" + (
                f" ({mode[entry.note]})" if entry.note in mode else ""
            )
        case "excluded":
            return f"Not asked (segregation of duties): {_excluded(entry.note, names)}"
        case "reminder":
            return f"Reminds {_people(entry, names)}"
        case "escalated":
            return f"Deadline passed: escalated to {_people(entry, names)}"
        case "approved":
            return f"Approved by {_people(entry, names)} (assumed)"
        case "activity":
            return f"Runs {entry.note} (assumed to succeed)"
        case "waiting":
            return "Waits"
        case "signal":
            return f"Waits for the signal {entry.note} (assumed to arrive at once)"
        case "failed":
            return f"Fails: {entry.note}"
        case "finished":
            return _OUTCOMES.get(entry.note, "Finished")
    return entry.kind


def trial_rows(
    trial: Trial,
    raw_definition: Mapping[str, Any],
    start: dt.datetime,
    names: Mapping[str, str] | None = None,
) -> list[Any]:
    """The rows, people by their names in ``names`` (usernames -> names, and the groups'
    names as ``present`` keeps them)."""
    names = names or {}
    base = str((trial.conversion or {}).get("base", ""))
    rows = []
    for entry in trial.entries:
        css = {"skipped": "skipped", "reminder": "chase", "escalated": "chase"}.get(entry.kind, "")
        rows.append(
            TrialRow(
                after=after_words(entry.at),
                at=when(start + dt.timedelta(seconds=entry.at)),
                step=step_title(raw_definition, entry.step),
                what=_what(entry, names) + _chosen_by_rules(entry, raw_definition, names, base),
                css=css,
            )
        )
    return rows
