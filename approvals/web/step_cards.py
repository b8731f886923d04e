"""The steps of the workflow template editor as cards with named fields, for finance
people: an approver picked from those who can approve, "on rejection" as a choice of
ending or an earlier step by its title, durations as a number and a unit. Plain form
fields posted with the editor (``step-<n>-<field>``), read back into the editor's step
documents (``definition_editor``'s shape: durations as ``{"number", "unit"}``), so
what the cards do not show (a retry policy, an approver's condition) is kept from the
version edited by step id, as before.

A step's id is never typed: a new step's is made from its title, unique in the
definition; a kept step posts its own back in a hidden field."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .definition_editor import EditorShapeError
from .duration_input import UNITS

KINDS = {
    "approval": "Approval by people",
    "action": "Automated step",
    "wait": "Wait",
    "signal": "Wait for a signal",
}
MODES = {"any": "any one of them", "all": "all of them", "quorum": "a number of them"}
END = "end"
SUBMITTER = "submitter"  # a rejection sends the request back to its submitter for changes
COUNT = "steps-count"
ADD = "_add_step"  # the button that adds a card
ADD_KIND = "add_step_kind"  # the kind of step it adds
ADD_TITLE = "add_step_title"  # and its title, which its id is made from
REMOVE = "_remove_step"  # the button that removes one (its value: the card's number)
MANAGER_OF_SUBMITTER = "manager:submitter"
MANAGER_OF_HOLDER = "manager:assignee"
PICKER_UNKNOWN = "Step {n}: choose an approver from the list."
PICKER_NOBODY = (
    "Step {n}: nobody who can approve is called “{typed}”; type part of a person's or a"
    " group's name, or “manager”."
)
PICKER_SEVERAL = "Step {n}: “{typed}” could be {names}; type more of the name."
KIND_UNKNOWN = "Step {n}: choose what kind of step it is."
TITLE_MISSING = "Step {n}: give it a title, so people know what it asks."
BACK_NOT_EARLIER = "Step {n}: a rejection can only go back to an earlier step."
NEW_TITLE = {"approval": "New approval", "action": "New automated step", "wait": "Wait"}


@dataclass
class Picker:
    """Who may be picked: the manager, the groups, then the people who can approve,
    each as ``(value, words)``."""

    managers: list[tuple[str, str]]
    groups: list[tuple[str, str]]
    people: list[tuple[str, str]]
    # what the version edited already names (kept even if no longer offered, so an
    # untouched step posts back as it was; the publish check then says why in words)
    kept: list[str] = field(default_factory=list)

    def values(self) -> set[str]:
        return {v for v, _ in [*self.managers, *self.groups, *self.people]}

    def words(self) -> dict[str, str]:
        return dict([*self.managers, *self.groups, *self.people])

    def resolve(self, typed: str, n: int, *, holder: bool) -> str:
        """The value a card's approver box means: a value as posted (``user:bob``), a
        user name the people search suggested (``bob``), or words typed, matched
        whole or in part against the names offered, without regard to case. Raises
        EditorShapeError in words for none or several. ``holder``: the manager of
        whoever holds the step may be chosen (escalation, never an approver)."""
        allowed = self.values() | set(self.kept)
        if not holder:
            allowed.discard(MANAGER_OF_HOLDER)
        text = " ".join(typed.split())
        if rule_of(text) is not None:
            if text not in allowed:
                raise EditorShapeError(PICKER_UNKNOWN.format(n=n))
            return text
        if f"user:{text}" in allowed:
            return f"user:{text}"
        offered = [(v, w) for v, w in self.words().items() if v in allowed]
        folded = text.casefold()
        whole = [v for v, w in offered if w.casefold() == folded]
        if len(whole) == 1:
            return whole[0]
        found = [(v, w) for v, w in offered if folded in w.casefold()]
        if len(found) == 1:
            return found[0][0]
        if not found:
            raise EditorShapeError(PICKER_NOBODY.format(n=n, typed=text))
        names = ", ".join(w for _, w in found[:5]) + (" and more" if len(found) > 5 else "")
        raise EditorShapeError(PICKER_SEVERAL.format(n=n, typed=text, names=names))


@dataclass
class Duration:
    number: str = ""
    unit: str = "days"


@dataclass
class Card:
    n: int
    id: str
    kind: str
    title: str
    approvers: list[str] = field(default_factory=list)  # picker values, one blank last
    mode: str = "any"
    quorum: str = ""
    deadline: Duration = field(default_factory=Duration)
    reminders: list[Duration] = field(default_factory=list)  # one blank last
    escalate: str = ""
    on_reject: str = END
    earlier: list[tuple[str, str]] = field(default_factory=list)  # (id, title)
    activity: str = ""
    compensate: str = ""
    timeout: Duration = field(default_factory=Duration)
    duration: Duration = field(default_factory=Duration)
    signal: str = ""
    words: dict[str, str] = field(default_factory=dict)  # the picker's names of values

    @property
    def kind_words(self) -> str:
        return KINDS.get(self.kind, self.kind)

    @property
    def where(self) -> str:
        """The card as a screen reader names its fields: ``Step 1``."""
        return f"Step {self.n + 1}"

    @property
    def p(self) -> str:
        """The prefix of the card's fields."""
        return f"step-{self.n}"

    def shown(self, value: str) -> str:
        """What an approver box shows for ``value``: its name (``Finance (group)``),
        or the value itself when no longer offered (the publish check says why)."""
        return self.words.get(value, value)

    @property
    def approver_rows(self) -> list[tuple[str, str]]:
        """(field name, what the box shows) per approver, one blank last."""
        return [(f"{self.p}-approver-{j}", self.shown(v)) for j, v in enumerate(self.approvers)]

    @property
    def escalate_shown(self) -> str:
        return self.shown(self.escalate)

    @property
    def reminder_rows(self) -> list[tuple[str, Duration]]:
        return [(f"{self.p}-reminder-{j}", d) for j, d in enumerate(self.reminders)]


# -- rules and values ----------------------------------------------------------------------


def rule_value(rule: Any) -> str:
    """``{"group": "finance"}`` -> ``"group:finance"``; anything else: ""."""
    if not isinstance(rule, Mapping):
        return ""
    for kind in ("manager", "group", "user"):
        if isinstance(rule.get(kind), str):
            return f"{kind}:{rule[kind]}"
    return ""


def rule_of(value: str) -> dict[str, str] | None:
    kind, _, name = value.partition(":")
    return {kind: name} if kind in ("manager", "group", "user") and name else None


def _duration(value: Any) -> Duration:
    if isinstance(value, Mapping) and value.get("number") not in (None, ""):
        return Duration(str(value["number"]), str(value.get("unit") or "days"))
    return Duration()


# -- editor steps -> cards ----------------------------------------------------------------


def cards(steps: Sequence[Any], words: Mapping[str, str] | None = None) -> list[Card]:
    """The cards for the editor's step documents (``to_editor(definition)["steps"]``);
    ``words``: the picker's names of its values, which the approver boxes show."""
    out: list[Card] = []
    for n, step in enumerate(steps):
        if not isinstance(step, Mapping):
            continue
        card = Card(n, str(step.get("id") or ""), str(step.get("kind") or "approval"), "")
        card.title = str(step.get("title") or "")
        card.earlier = [(c.id, c.title or c.id) for c in out if c.id]
        card.approvers = [rule_value(r) for r in step.get("approvers") or []] + [""]
        card.mode = str(step.get("mode") or "any")
        card.quorum = str(step.get("quorum") or "")
        card.deadline = _duration(step.get("deadline"))
        card.reminders = [_duration(r) for r in step.get("reminders") or []] + [Duration()]
        card.escalate = rule_value(step.get("escalate_to"))
        card.on_reject = str(step.get("on_reject") or END)
        card.activity = str(step.get("activity") or "")
        card.compensate = str(step.get("compensate") or "")
        card.timeout = _duration(step.get("timeout"))
        card.duration = _duration(step.get("duration"))
        card.signal = str(step.get("signal") or "")
        card.words = dict(words or {})
        out.append(card)
    return out


# -- what was posted -> editor steps ------------------------------------------------------


def posted(post: Mapping[str, Any]) -> bool:
    return COUNT in post


def reshaping(post: Mapping[str, Any]) -> bool:
    """Was a card added or removed (the page comes back with it, nothing saved)?"""
    return bool(post.get(ADD)) or bool(post.get(REMOVE))


def kept_values(steps: Sequence[Any]) -> list[str]:
    """The picker values the steps already name (approvers and escalations)."""
    out: list[str] = []
    for step in steps:
        if isinstance(step, Mapping):
            out += [rule_value(r) for r in step.get("approvers") or []]
            out.append(rule_value(step.get("escalate_to")))
    return [v for v in out if v]


def _number(post: Mapping[str, Any], name: str) -> dict[str, Any]:
    number = str(post.get(f"{name}-number") or "").strip()
    unit = str(post.get(f"{name}-unit") or "days")
    return {"number": number, "unit": unit if unit in UNITS else "days"}


def _slug(title: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:40] or "step"
    if not base[0].isalpha():
        base = f"step_{base}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}_{n}", n + 1
    return candidate


def _count(post: Mapping[str, Any]) -> int:
    text = str(post.get(COUNT) or "0")
    return min(int(text), 200) if text.isascii() and text.isdigit() else 0


def steps_from_post(post: Mapping[str, Any], picker: Picker) -> list[dict[str, Any]]:
    """The editor's step documents the cards posted, with a card added or removed when
    that button was pressed. Raises EditorShapeError, in words, for a choice the cards
    never offer."""
    steps: list[dict[str, Any]] = []
    taken = {str(post.get(f"step-{n}-id") or "") for n in range(_count(post))} - {""}
    removed = str(post.get(REMOVE) or "")
    for n in range(_count(post)):
        if removed == str(n):
            continue
        steps.append(_step_from_post(post, n, picker, taken, [s["id"] for s in steps]))
    if post.get(ADD):
        kind = str(post.get(ADD_KIND) or "approval")
        if kind not in KINDS:
            raise EditorShapeError(KIND_UNKNOWN.format(n=len(steps) + 1))
        title = str(post.get(ADD_TITLE) or "").strip()[:200] or NEW_TITLE.get(kind, KINDS[kind])
        steps.append({"kind": kind, "id": _slug(title, taken), "title": title})
    return steps


def _step_from_post(
    post: Mapping[str, Any], n: int, picker: Picker, taken: set[str], earlier: list[str]
) -> dict[str, Any]:
    p = f"step-{n}"
    kind = str(post.get(f"{p}-kind") or "")
    if kind not in KINDS:
        raise EditorShapeError(KIND_UNKNOWN.format(n=n + 1))
    title = str(post.get(f"{p}-title") or "").strip()
    if not title:
        raise EditorShapeError(TITLE_MISSING.format(n=n + 1))
    step_id = str(post.get(f"{p}-id") or "")
    if not step_id:
        step_id = _slug(title, taken)
        taken.add(step_id)
    step: dict[str, Any] = {"kind": kind, "id": step_id, "title": title}
    if kind == "approval":
        step.update(_approval_from_post(post, p, n, picker, earlier))
    elif kind == "action":
        step["activity"] = str(post.get(f"{p}-activity") or "")
        step["compensate"] = str(post.get(f"{p}-compensate") or "")
        step["timeout"] = _number(post, f"{p}-timeout")
    elif kind == "wait":
        step["duration"] = _number(post, f"{p}-duration")
    else:
        step["signal"] = str(post.get(f"{p}-signal") or "").strip()
        step["timeout"] = _number(post, f"{p}-timeout")
    return step


def _approval_from_post(
    post: Mapping[str, Any], p: str, n: int, picker: Picker, earlier: list[str]
) -> dict[str, Any]:
    approvers = []
    for j in range(_small(post.get(f"{p}-approvers"))):
        typed = str(post.get(f"{p}-approver-{j}") or "").strip()
        if typed:
            approvers.append(rule_of(picker.resolve(typed, n + 1, holder=False)))
    escalate = str(post.get(f"{p}-escalate") or "").strip()
    if escalate:
        escalate = picker.resolve(escalate, n + 1, holder=True)
    on_reject = str(post.get(f"{p}-on_reject") or END)
    if on_reject not in (END, SUBMITTER) and on_reject not in earlier:
        raise EditorShapeError(BACK_NOT_EARLIER.format(n=n + 1))
    mode = str(post.get(f"{p}-mode") or "any")
    reminders = [
        _number(post, f"{p}-reminder-{j}") for j in range(_small(post.get(f"{p}-reminders")))
    ]
    quorum = str(post.get(f"{p}-quorum") or "").strip()
    return {
        "approvers": approvers,
        "mode": mode if mode in MODES else "any",
        "quorum": int(quorum) if quorum.isascii() and quorum.isdigit() else (quorum or None),
        "deadline": _number(post, f"{p}-deadline"),
        "reminders": [r for r in reminders if r["number"]],
        "escalate_to": rule_of(escalate) if escalate else None,
        "on_reject": on_reject,
    }


def _small(value: Any) -> int:
    text = str(value or "0")
    return min(int(text), 50) if text.isascii() and text.isdigit() else 0
