"""What changes between two versions of a workflow template, in sentences a finance
admin reads: steps by their titles, conditions in words with amounts in currency units,
durations as "3 days", approvers and modes as people say them.

``definition_changes`` compares the two definitions as published (the raw documents:
they carry the titles, and an older version need not parse under today's rules).
Settings it has no words for read as a generic sentence naming the step and the
setting; no JSON ever reaches a sentence. The JSON line diff (``definition_diff``)
stays beside it for the technical reader."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from templates_engine.durations import parse_duration
from templates_engine.errors import DefinitionError

from ..notifications.format import SYMBOLS
from ..words.data import code_words
from . import present

NO_CHANGES = "No changes."
NEW_STEP = "New step: {title}, {where}"
STEP_REMOVED = "Step removed: {title}"
STEP_RENAMED = "Step {old} is now called {new}"
STEP_ORDER = "Steps now run in this order: {order}"
SETTING_CHANGED = "{title}: its {setting} changed"
SETTING_SET = "{title}: its {setting} is set"
TEMPLATE_SETTING_CHANGED = "The template's {setting} changed"
FIELD_ADDED = "New field: {label}"
FIELD_REMOVED = "Field removed: {label}"
FIELD_RELABELLED = "Field {old} is now called {new}"
FIELD_CHANGED = "Field {label}: its settings changed"
FIELD_REQUIRED = "Field {label} is now required"
FIELD_OPTIONAL = "Field {label} is now optional"
WAS = "{now} (was {then})"

MODES = {"any": "any one approves", "all": "all must approve"}
TARGETS = {"end": "the request ends", "submitter": "it goes back to the submitter"}
WHILE_RUNNING = {
    "reject": "a second request for the same subject is refused while one runs",
    "use_existing": "a second request for the same subject joins the one running",
    "allow": "a second request for the same subject starts alongside the one running",
}
AFTER_FINISHED = {
    "allow": "a new request may follow a finished one",
    "reject": "a finished request cannot be followed by another for the same subject",
}
# The words of a setting in the generic sentence, where ``humanise`` would say less.
SETTING_NAMES = {
    "escalate_to": "escalation",
    "send_back_to": "send back",
    "params": "parameters",
    "allow_undeclared_fields": "open data setting",
}
_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))


def duration_words(value: object) -> str | None:
    """``"P3D"`` or ``259200`` -> ``3 days``; ``"PT90M"`` -> ``1 hour 30 minutes``;
    None when ``value`` is no duration."""
    try:
        left = round(parse_duration(value, ""))
    except DefinitionError:
        return None
    parts = []
    for unit, size in _UNITS:
        count, left = divmod(left, size)
        if count:
            parts.append(f"{count} {unit}{'' if count == 1 else 's'}")
    return " ".join(parts) or "no time"


def _setting(name: str) -> str:
    return SETTING_NAMES.get(name) or present.humanise(name).lower()


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _quoted(value: object) -> str:
    return f"“{value}”" if isinstance(value, str) and value else "none"


class _Reader:
    """Puts one version's settings into words: its schema for field labels and money."""

    def __init__(self, doc: Mapping[str, Any], names: Mapping[str, str], base: str = "") -> None:
        schema = doc.get("schema")
        self.schema: Mapping[str, Any] | None = schema if isinstance(schema, Mapping) else None
        self.names = names
        self.base = base  # the currency the organisation's rules compare amounts in
        self.titles = present.step_titles(doc)

    def condition(self, condition: object, step_kind: str) -> str:
        verb = "approves" if step_kind == "approval" else "runs"
        if not isinstance(condition, str) or not condition:
            return f"{verb} always"
        side = present._money_side(condition, self.schema, {}, self.base)
        if side:
            return f"{verb} when {_capital(side[0])} is {side[1]} {side[2]}"
        return f"{verb} when {present.condition_words(condition, self.schema, {}, self.base)}"

    def duration(self, value: object, none: str) -> str | None:
        return none if value is None else duration_words(value)

    def reminders(self, value: object) -> str | None:
        if value in (None, []):
            return "no reminders"
        if not isinstance(value, list):
            return None
        each = [duration_words(v) for v in value]
        if any(w is None for w in each):
            return None
        return "reminders after " + present._list(w for w in each if w)

    def rules(self, value: object) -> str | None:
        if value in (None, []):
            return "none"
        if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
            return None
        lines = present.approver_lines({"approvers": value}, self.names, self.schema, {}, self.base)
        return "; ".join(lines) if lines else None

    def escalation(self, value: object) -> str | None:
        if value is None:
            return "no escalation"
        if not isinstance(value, Mapping):
            return None
        if value.get("manager") == "assignee":
            return "escalates to the manager of whoever holds the step"
        words = self.rules([value])
        return None if words is None else "escalates to " + words

    def approvers(self, step: Mapping[str, Any]) -> str | None:
        if not isinstance(step.get("approvers"), list):
            return None
        rules = step["approvers"]
        if not all(isinstance(r, Mapping) for r in rules):
            return None
        lines = present.approver_lines(
            {"approvers": rules, "mode": step.get("mode")}, self.names, self.schema, {}, self.base
        )
        return "; ".join(lines) if lines else None

    def mode(self, step: Mapping[str, Any]) -> str:
        mode = step.get("mode", "any")
        if mode == "quorum":
            return f"{step.get('quorum', 1)} must approve"
        return MODES.get(str(mode), present.humanise(str(mode)).lower())

    def target(self, value: object) -> str:
        if isinstance(value, str) and value in self.titles:
            return f"it goes back to {self.titles[value]}"
        return TARGETS.get(str(value), present.humanise(str(value)).lower())


def definition_changes(
    old_doc: Mapping[str, Any],
    new_doc: Mapping[str, Any],
    *,
    names: Mapping[str, str] | None = None,
    base: str = "",
) -> list[str]:
    """The changes from ``old_doc`` to ``new_doc``, a sentence each: the template's own
    settings, then its data fields, then its steps in the new version's order. ``names``
    maps usernames to first names; amounts in conditions read in ``base``, the
    organisation's base currency. ``[NO_CHANGES]`` when nothing differs."""
    old, new = _Reader(old_doc, names or {}, base), _Reader(new_doc, names or {}, base)
    out = _top_changes(old_doc, new_doc)
    out += _field_changes(old.schema, new.schema)
    out += _step_changes(old_doc, new_doc, old, new)
    return out or [NO_CHANGES]


# -- the template's own settings -------------------------------------------------------


def _top_changes(old_doc: Mapping[str, Any], new_doc: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for name in sorted(set(old_doc) | set(new_doc), key=_top_order):
        before, after = old_doc.get(name), new_doc.get(name)
        if before == after or name in ("steps", "schema", "version"):
            continue
        if name == "title":
            out.append("Title: " + WAS.format(now=_quoted(after), then=_quoted(before)))
        elif name == "summary":
            out.append("Summary line: " + WAS.format(now=_quoted(after), then=_quoted(before)))
        elif name == "description":
            out.append("Description: " + _quoted(after))
        elif name == "distinct_approvers":
            out.append(
                "One person may now approve only one step of a request"
                if after
                else "One person may now approve several steps of a request"
            )
        elif name == "start_policy" and _policy_words(after) and _policy_words(before):
            out.append(
                "Start policy: " + WAS.format(now=_policy_words(after), then=_policy_words(before))
            )
        else:
            out.append(TEMPLATE_SETTING_CHANGED.format(setting=_setting(name)))
    return out


_TOP_ORDER = ("key", "title", "description", "summary", "distinct_approvers", "start_policy")


def _top_order(name: str) -> tuple[int, str]:
    return (_TOP_ORDER.index(name) if name in _TOP_ORDER else len(_TOP_ORDER), name)


def _policy_words(policy: object) -> str:
    if policy is None:
        policy = {}
    if not isinstance(policy, Mapping):
        return ""
    running = WHILE_RUNNING.get(str(policy.get("while_running", "reject")))
    finished = AFTER_FINISHED.get(str(policy.get("after_finished", "allow")))
    return f"{running}; {finished}" if running and finished else ""


# -- data fields ------------------------------------------------------------------------


def _field_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[str]:
    before = dict((old or {}).get("properties") or {})
    after = dict((new or {}).get("properties") or {})
    required_before = set((old or {}).get("required") or [])
    required_after = set((new or {}).get("required") or [])
    out: list[str] = []
    for name in before:
        if name not in after:
            out.append(FIELD_REMOVED.format(label=present.field_label(old, name)))
    for name in after:
        label = present.field_label(new, name)
        if name not in before:
            out.append(FIELD_ADDED.format(label=label))
            continue
        was = present.field_label(old, name)
        if was != label:
            out.append(FIELD_RELABELLED.format(old=was, new=label))
        rest_before = {k: v for k, v in (before[name] or {}).items() if k != "title"}
        rest_after = {k: v for k, v in (after[name] or {}).items() if k != "title"}
        if rest_before != rest_after:
            out.append(FIELD_CHANGED.format(label=label))
        if (name in required_after) != (name in required_before):
            template = FIELD_REQUIRED if name in required_after else FIELD_OPTIONAL
            out.append(template.format(label=label))
    return out


# -- steps ------------------------------------------------------------------------------


def _steps(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        s["id"]: s
        for s in doc.get("steps") or []
        if isinstance(s, Mapping) and isinstance(s.get("id"), str)
    }


def _step_changes(
    old_doc: Mapping[str, Any], new_doc: Mapping[str, Any], old: _Reader, new: _Reader
) -> list[str]:
    before, after = _steps(old_doc), _steps(new_doc)
    order = list(after)
    out: list[str] = []
    for index, step_id in enumerate(order):
        if step_id in before:
            continue
        where = f"after {new.titles[order[index - 1]]}" if index else "first"
        out.append(NEW_STEP.format(title=new.titles[step_id], where=where))
        out += _one_step(_blank(after[step_id]), after[step_id], new, new, fresh=True)
    for step_id in before:
        if step_id not in after:
            out.append(STEP_REMOVED.format(title=old.titles[step_id]))
    kept_before = [s for s in before if s in after]
    kept_after = [s for s in order if s in before]
    if kept_before != kept_after:
        out.append(STEP_ORDER.format(order=", ".join(new.titles[s] for s in order)))
    for step_id in kept_after:
        out += _one_step(before[step_id], after[step_id], old, new)
    return out


def _blank(step: Mapping[str, Any]) -> dict[str, Any]:
    """A step of ``step``'s kind with nothing set: what a new step is compared with."""
    return {k: step[k] for k in ("id", "title", "kind") if k in step}


def _one_step(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    old: _Reader,
    new: _Reader,
    *,
    fresh: bool = False,
) -> list[str]:
    """A sentence for each setting of the step that changed; for a ``fresh`` (new)
    step, one for each setting it has, and always when it runs."""
    title = new.titles[after["id"]]
    out: list[str] = []
    was_title = old.titles.get(before["id"], title)
    if was_title != title:
        out.append(STEP_RENAMED.format(old=was_title, new=title))
    kind, was_kind = str(after.get("kind", "")), str(before.get("kind", ""))
    if kind != was_kind:
        return out + [
            f"{title}: now {_article(kind)} step ({_article(was_kind)} step before); "
            "its settings changed with it"
        ]
    said: set[str] = {"id", "title", "kind"}
    when: _Setting = (("when",), lambda r, s: r.condition(s.get("when"), kind))
    for names, words in (when, *_KIND_SETTINGS.get(kind, ())):
        said.update(names)
        if fresh:
            if names == ("when",) or any(n in after for n in names):
                out.append(_fresh_words(title, names, words(new, after)))
        elif any(before.get(n) != after.get(n) for n in names):
            out.append(_changed_words(title, names, words(new, after), words(old, before)))
    for name in sorted((set(before) | set(after)) - said):
        if before.get(name) != after.get(name):
            setting = _setting(name)
            template = SETTING_SET if fresh else SETTING_CHANGED
            out.append(template.format(title=title, setting=setting))
    return out


def _fresh_words(title: str, names: tuple[str, ...], now: str | None) -> str:
    """A new step's setting: what it is, else that it is set."""
    return (
        f"{title}: {now}"
        if now
        else SETTING_CHANGED.format(title=title, setting=_setting(names[0]))
    )


def _changed_words(title: str, names: tuple[str, ...], now: str | None, then: str | None) -> str:
    """A kept step's changed setting: what it is and was, else that it changed."""
    if now is None or then is None or now == then:
        return SETTING_CHANGED.format(title=title, setting=_setting(names[0]))
    return f"{title}: " + WAS.format(now=now, then=_tail(now, then))


# One setting of a step as the changes read it: the names it covers, and its words as a
# reader (the version before, or after) tells them (None when there are none).
_Setting = tuple[tuple[str, ...], Callable[[_Reader, Mapping[str, Any]], str | None]]
_RUNS: tuple[_Setting, ...] = (
    (("timeout",), lambda r, s: _prefixed("time limit", r.duration(s.get("timeout"), "none"))),
    (("activity",), lambda r, s: _prefixed("runs", _code(s.get("activity")))),
    (("signal",), lambda r, s: _prefixed("waits for", _code(s.get("signal")))),
)
# The settings of each kind of step beside its condition (every kind's), in the order
# the changes are told; any other setting that changed is named by SETTING_NAMES.
_KIND_SETTINGS: dict[str, tuple[_Setting, ...]] = {
    "approval": (
        (("approvers",), lambda r, s: _prefixed("approvers:", r.approvers(s))),
        (("mode", "quorum"), lambda r, s: "mode: " + r.mode(s)),
        (("deadline",), lambda r, s: _prefixed("deadline", r.duration(s.get("deadline"), "none"))),
        (("reminders",), lambda r, s: r.reminders(s.get("reminders"))),
        (("escalate_to",), lambda r, s: r.escalation(s.get("escalate_to"))),
        (("fallback",), lambda r, s: _prefixed("fallback:", r.rules(s.get("fallback")))),
        (("on_reject",), lambda r, s: "on reject, " + r.target(s.get("on_reject", "end"))),
        (
            ("send_back_to",),
            lambda r, s: "sent back, " + r.target(s.get("send_back_to", "submitter")),
        ),
        (
            ("reason_required",),
            lambda r, s: (
                "a reason is "
                + ("required" if s.get("reason_required", True) else "optional")
                + " to reject or send back"
            ),
        ),
    ),
    "wait": (
        (("duration",), lambda r, s: _prefixed("waits", r.duration(s.get("duration"), "none"))),
    ),
    "action": _RUNS,
    "signal": _RUNS,
}


def _tail(now: str, then: str) -> str:
    """``then`` without the words it shares with ``now`` from the start: ``deadline 3
    days (was 2 days)``; an amount keeps its currency symbol."""
    a, b = now.split(" "), then.split(" ")
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    if common >= len(b):
        common = 1 if len(b) > 1 else 0
    if common and b[common - 1] in SYMBOLS.values():
        common -= 1
    return " ".join(b[common:])


def _prefixed(label: str, words: str | None) -> str | None:
    return None if words is None else f"{label} {words}"


def _code(value: object) -> str | None:
    return code_words(present.humanise(value)) if isinstance(value, str) and value else None


def _article(kind: str) -> str:
    kind = kind or "unknown"
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"
