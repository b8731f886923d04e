"""Steps as people read them: a step's title (the workflow template's ``title``, else
its id in words) and, when a step fails for good, the sentence people are told: the
step's own ``failure_text`` when the workflow template gives one, else a plain
sentence naming the step. Never the error's name or an activity's message: those are
for the administrators' pages. A base helper: the pages (``web.present``) and the mails
(``notifications.messages``) say the same."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

NO_APPROVERS = "NoApprovers"
# A request that failed (or was turned back) before any step with an undo was done: the
# engine starts to turn back and ends at once (CompensationStarted, then the ending).
NOTHING_UNDONE = "no step had been done yet, so there was nothing to undo"
_TURNED_BACK_ENDINGS = ("WorkflowRolledBack", "WorkflowRejected", "WorkflowCancelled")


def nothing_undone(before: str | None, ending: str) -> bool:
    """Whether an ending event of type ``ending`` right after an event of type
    ``before`` ended a turn back that had nothing to undo (an undo runs in between)."""
    return before == "CompensationStarted" and ending in _TURNED_BACK_ENDINGS


def humanise(identifier: str) -> str:
    """``reserve_budget`` -> ``Reserve budget``; ``amountPaise`` -> ``Amount paise``."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", identifier or "")
    words = re.sub(r"[_\-]+", " ", words).strip().lower()
    return words[:1].upper() + words[1:]


def _steps(raw_definition: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    steps = (raw_definition or {}).get("steps") or []
    return [s for s in steps if isinstance(s, Mapping) and isinstance(s.get("id"), str)]


def step_titles(raw_definition: Mapping[str, Any] | None) -> dict[str, str]:
    """Each step id -> its ``title`` in the workflow template, else the id in words."""
    titles: dict[str, str] = {}
    for step in _steps(raw_definition):
        title = step.get("title")
        titles[step["id"]] = title if isinstance(title, str) and title else humanise(step["id"])
    return titles


def step_title(raw_definition: Mapping[str, Any] | None, step: str | None) -> str:
    if not step:
        return ""
    return title_in(step_titles(raw_definition), step)


def title_in(titles: Mapping[str, str], step: str | None) -> str:
    """``step_title`` from the titles ``step_titles`` gave: asked for several steps of
    one workflow template, the titles are worked out once."""
    if not step:
        return ""
    return titles.get(step) or humanise(step)


# Errors whose message is written for the requester (``activities.builtin``): the
# history and the mail give it as the reason.
READABLE_ERRORS = frozenset({"BudgetExceeded"})
# Why, in words, for the errors the engine and the shipped activities name; any other
# error's name and message stay on the administrators' pages.
_WHY = {
    "ConditionError": "its condition could not be worked out from the request's details",
    "Timeout": "it took longer than it is allowed to",
    "HeartbeatTimeout": "it stopped reporting that it was still working",
    "HttpTimeout": "the other system did not answer in time",
    "HttpServerError": "the other system had a fault",
    "HttpClientError": "the other system refused it",
    "HttpAnswerUnusable": "the other system's answer could not be used",
    "HttpRequestInvalid": "the step is set up wrongly; an administrator can correct it",
    "OutboundRefused": "the address it calls is not allowed for this organisation",
}
WHY_UNKNOWN = "an error an administrator can see on the request's page"


def failure_reason(error: str, message: str = "") -> str:
    """Why a step failed, in words: the activity's own message when it is written for
    people (``READABLE_ERRORS``), else what the error means."""
    if error in READABLE_ERRORS and message.strip():
        return message.strip().rstrip(".")
    return _WHY.get(error, WHY_UNKNOWN)


def failure_sentence(
    raw_definition: Mapping[str, Any] | None, step: str, error: str = "", message: str = ""
) -> str:
    """Why a step failed for good, as its requester reads it: ``The Budget check step
    did not pass: ₹15,00,00,000.00 is more than the department's budget allows`` (or the
    step's own ``failure_text``); without an error, only that it did not pass."""
    for s in _steps(raw_definition):
        own = s.get("failure_text")
        if s["id"] == step and isinstance(own, str) and own.strip():
            return own.strip().rstrip(".")
    title = step_title(raw_definition, step) or "A"
    if error == NO_APPROVERS:
        return f"Nobody could be found to decide the {title} step"
    if not error:
        return f"The {title} step did not pass"
    return f"The {title} step did not pass: {failure_reason(error, message)}"


def undo_failure_sentence(raw_definition: Mapping[str, Any] | None, step: str) -> str:
    """What a failed undo means to the requester: a person finishes it."""
    title = step_title(raw_definition, step) or "a"
    return f"Undoing the {title} step did not work; an administrator will finish it"
