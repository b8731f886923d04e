"""The structured editor of a workflow template definition in the admin: a JSON Schema
that django-jsonform renders as a form (steps as a list, each of its kind; the data
fields; durations in days, hours, minutes and seconds; approvers picked from the
organisation's groups and people), and the two conversions between that form's
document and the definition format.

The editor's document is the definition with three differences, so a finance person
never meets JSON Schema or ISO 8601:

- ``fields`` (a list: name, label, type, required, choices, money) stands for
  ``schema`` (``properties`` and ``required``);
- durations are ``{"days", "hours", "minutes", "seconds"}``;
- every field of the form is present, empty when unused; empty values are dropped.

What the editor does not show (a step's retry policy, an activity's params, the start
policy) is kept from the version being edited, matched by step id.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import isodate

from templates_engine import DefinitionError

from .duration_input import UNITS, DurationInputError, from_seconds, to_iso

JOIN = "§"  # django-jsonform's separator of the parts of a field's path

TYPES = {  # editor word -> JSON Schema type
    "text": "string",
    "whole number": "integer",
    "number": "number",
    "yes/no": "boolean",
    "money": "integer",
}
_DURATION_KEYS = ("deadline", "duration", "timeout")
DURATION_WORDS = {"deadline": "The deadline", "duration": "The wait", "timeout": "The time limit"}
MONEY_EXPONENT = 2  # limits of a money field are typed in rupees (paise kept)
MONEY_LIMIT_MINOR = 10**15
MONEY_LIMIT_INVALID = (
    "{label}: the lowest and highest amounts are in currency units, at most two decimals."
)
EDITOR_UNREADABLE = (
    "Part of the form came back in a shape it cannot read; reload the page and try again."
)


class EditorShapeError(ValueError):
    """The editor's document is not in the shape the editor sends; the message says
    what, in a sentence."""


_FIELD_EXTRAS = ("description", "minimum", "maximum", "maxLength")


# -- the schema the form is drawn from ---------------------------------------------------


def _duration(title: str, help_text: str = "") -> dict[str, Any]:
    return {
        "type": "object",
        "title": title,
        "help_text": help_text,
        "properties": {
            "number": {"type": "integer", "title": f"{title}: how many", "minimum": 1},
            "unit": {
                "type": "string",
                "title": f"{title}: unit",
                "choices": list(UNITS),
                "default": "days",
            },
        },
    }


def _rule(title: str, groups: Sequence[str], users: Sequence[str], managers: Sequence[str]) -> Any:
    return {
        "type": "object",
        "title": title,
        "help_text": "Fill in one: the manager, a group, or a person.",
        "properties": {
            "manager": {"type": "string", "title": "Manager of", "choices": ["", *managers]},
            "group": {"type": "string", "title": "Group", "choices": ["", *groups]},
            "user": {"type": "string", "title": "Person", "choices": ["", *users]},
        },
    }


def _step(kind: str, title: str, own: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "title": title,
        "properties": {
            "kind": {"type": "string", "const": kind, "readonly": True, "title": "Kind"},
            "id": {"type": "string", "title": "Step id", "help_text": "a_short_name, unique"},
            "title": {"type": "string", "title": "Title"},
            **own,
        },
    }


def editor_schema(
    *, groups: Sequence[str], users: Sequence[str], activities: Sequence[str] = ()
) -> dict[str, Any]:
    """The JSON Schema of the editor's document, with the organisation's groups and
    people as the approvers one may pick, and the registered activities."""
    # conditions (a step's, a rule-chosen approver's) are edited in the condition
    # builders beside this form (web/condition_form.py), in the fields' own units
    steps = [
        _approval_step(groups, users),
        _action_step(activities),
        _step("wait", "Wait", {"duration": _duration("Wait for")}),
        _signal_step(),
    ]
    return {
        "type": "object",
        "title": "About this workflow template",
        "properties": {
            "key": {
                "type": "string",
                "title": "Short name",
                "help_text": "In links and the API: lower-case words joined by dashes, such as"
                " expense-approval",
            },
            "title": {"type": "string", "title": "Name people see"},
            "description": {"type": "string", "title": "What it is for", "widget": "textarea"},
            "distinct_approvers": {
                "type": "boolean",
                "title": "Four eyes: no one approves two steps of the same workflow",
            },
            "fields": {"type": "array", "title": "Data fields", "items": _field()},
            "steps": {"type": "array", "title": "Steps (in order)", "items": {"oneOf": steps}},
        },
    }


def _approval_step(groups: Sequence[str], users: Sequence[str]) -> dict[str, Any]:
    return _step(
        "approval",
        "Approval by people",
        {
            "approvers": {
                "type": "array",
                "title": "Approvers",
                "items": _rule("Approver", groups, users, ["submitter"]),
            },
            "mode": {
                "type": "string",
                "title": "Who must approve",
                "choices": [
                    {"title": "any one of them", "value": "any"},
                    {"title": "all of them", "value": "all"},
                    {"title": "a number of them (quorum)", "value": "quorum"},
                ],
                "default": "any",
            },
            "quorum": {"type": "integer", "title": "Quorum", "minimum": 1},
            "deadline": _duration("Deadline", "After this, the step is escalated"),
            "reminders": {
                "type": "array",
                "title": "Reminders",
                "items": _duration("Remind after"),
            },
            "escalate_to": _rule("Escalate to", groups, users, ["assignee", "submitter"]),
            "fallback": {
                "type": "array",
                "title": "When segregation of duties rules everyone out, ask",
                "items": _rule("Fallback", groups, users, ["submitter"]),
            },
            "on_reject": {
                "type": "string",
                "title": "A rejection",
                "help_text": "end, or the id of an earlier step to go back to",
            },
        },
    )


def _action_step(activities: Sequence[str]) -> dict[str, Any]:
    return _step(
        "action",
        "Automated step",
        {
            "activity": {"type": "string", "title": "Activity", "choices": ["", *activities]},
            "compensate": {
                "type": "string",
                "title": "Undone by activity",
                "choices": ["", *activities],
            },
            "timeout": _duration("Time limit of one attempt"),
        },
    )


def _signal_step() -> dict[str, Any]:
    return _step(
        "signal",
        "Wait for a signal",
        {
            "signal": {"type": "string", "title": "Signal name"},
            "timeout": _duration("Give up after"),
        },
    )


def _field() -> dict[str, Any]:
    """A data field of the request's form."""
    return {
        "type": "object",
        "title": "Field",
        "properties": {
            "name": {"type": "string", "title": "Name", "help_text": "as conditions read it"},
            "label": {"type": "string", "title": "Label"},
            "type": {"type": "string", "title": "Type", "choices": list(TYPES), "default": "text"},
            "required": {"type": "boolean", "title": "Required"},
            "choices": {"type": "array", "title": "Choices", "items": {"type": "string"}},
            "currency_field": {"type": "string", "title": "Currency field (money only)"},
            "description": {"type": "string", "title": "Help text"},
            "minimum": {
                "type": "number",
                "title": "At least",
                "help_text": "For money, in units of the request's own currency (1000 is 1,000.00)",
            },
            "maximum": {"type": "number", "title": "At most"},
        },
    }


# -- definition -> editor ------------------------------------------------------------------


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            parsed = isodate.parse_duration(value)
        except (isodate.ISO8601Error, ValueError):
            return None
        return parsed.total_seconds() if isinstance(parsed, dt.timedelta) else None
    return None


def duration_to_editor(value: Any, _what: str = "") -> Any:
    seconds = _seconds(value)
    if seconds is None:
        return value
    number, unit = from_seconds(seconds)
    return {"number": number, "unit": unit}


def duration_from_editor(value: Any, what: str = "The duration") -> Any:
    """``{"number": 3, "unit": "days"}`` -> ``"P3D"``; an empty number: no duration."""
    if not isinstance(value, Mapping):
        return value
    try:
        return to_iso(value.get("number"), value.get("unit") or "days", what=what)
    except DurationInputError as exc:
        raise EditorShapeError(str(exc)) from exc


def _durations(step: Mapping[str, Any], convert: Callable[..., Any]) -> dict[str, Any]:
    """A copy of ``step`` with each of its durations (reminders too) converted."""
    out = dict(step)
    for key in _DURATION_KEYS:
        if key in out:
            out[key] = convert(out[key], DURATION_WORDS[key])
    if isinstance(out.get("reminders"), list):
        out["reminders"] = [convert(r, "A reminder") for r in out["reminders"]]
    return out


def _field_to_editor(name: str, prop: Mapping[str, Any], required: bool) -> dict[str, Any]:
    money = prop.get("x-money")
    kind = "money" if isinstance(money, Mapping) else None
    if kind is None:
        kind = next((w for w, t in TYPES.items() if t == prop.get("type")), "text")
    out: dict[str, Any] = {
        "name": name,
        "label": prop.get("title", ""),
        "type": kind,
        "required": required,
        "choices": list(prop.get("enum", [])),
        "currency_field": money.get("currency", "") if isinstance(money, Mapping) else "",
    }
    out.update({k: prop[k] for k in ("description", "minimum", "maximum") if k in prop})
    if kind == "money":  # limits in currency units, as the amount is typed
        for key in ("minimum", "maximum"):
            if _is_number(out.get(key)):
                units = Decimal(out[key]).scaleb(-MONEY_EXPONENT)
                out[key] = int(units) if units == units.to_integral_value() else float(units)
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _schema(definition: Mapping[str, Any]) -> Mapping[str, Any]:
    schema = definition.get("schema")
    return schema if isinstance(schema, Mapping) else {}


def to_editor(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The editor's document for ``definition``."""
    doc = {k: v for k, v in definition.items() if k != "schema"}
    schema = _schema(definition)
    required = set(schema.get("required", []))
    doc["fields"] = [
        _field_to_editor(name, prop, name in required)
        for name, prop in (schema.get("properties") or {}).items()
        if isinstance(prop, Mapping)
    ]
    steps = []
    for raw in definition.get("steps") or []:
        step = _durations(raw, duration_to_editor)
        if isinstance(step.get("compensate"), Mapping):
            step["compensate"] = step["compensate"].get("activity", "")
        steps.append(step)
    doc["steps"] = steps
    return doc


# -- editor -> definition ------------------------------------------------------------------


def _prune(value: Any) -> Any:
    """Drop the form's empty values: "", None, empty lists and objects."""
    if isinstance(value, Mapping):
        out = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ("", None, [], {})}
    if isinstance(value, list):
        return [v for v in (_prune(x) for x in value) if v not in ("", None, {})]
    return value


def _field_from_editor(field: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any]:
    kind = field.get("type") or "text"
    prop: dict[str, Any] = {k: v for k, v in before.items() if k not in ("x-money", "enum")}
    prop["type"] = TYPES.get(kind, "string")
    for src, dst in (("label", "title"), ("choices", "enum"), *((k, k) for k in _FIELD_EXTRAS)):
        if field.get(src) not in (None, "", []):
            prop[dst] = field[src]
        elif src in ("label", "choices", "description", "minimum", "maximum"):
            prop.pop(dst, None)
    if kind == "money":
        prop["x-money"] = {"currency": field.get("currency_field") or "currency"}
        for key in ("minimum", "maximum"):
            if key in prop and _is_number(field.get(key)):
                prop[key] = _minor(field[key], field.get("label") or field.get("name") or "")
    return prop


def _minor(units: Any, label: str) -> int:
    """A money field's limit typed in currency units (1000.5), in minor units (100050)."""
    minor = Decimal(str(units)).scaleb(MONEY_EXPONENT)
    if minor != minor.to_integral_value() or abs(minor) > MONEY_LIMIT_MINOR:
        raise EditorShapeError(MONEY_LIMIT_INVALID.format(label=label))
    return int(minor)


def from_editor(doc: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """The definition the editor's document ``doc`` stands for; what the editor does
    not show is taken from ``previous`` (the version edited)."""
    previous = previous or {}
    doc = _prune(doc)
    out: dict[str, Any] = {
        k: v for k, v in previous.items() if k not in ("schema", "steps", "title", "description")
    }
    out.update({k: v for k, v in doc.items() if k not in ("fields", "steps")})
    if not doc.get("distinct_approvers"):
        out.pop("distinct_approvers", None)
    fields = doc.get("fields") or []
    old_schema = _schema(previous)
    old_props = old_schema.get("properties") or {}
    if fields or old_schema:
        schema = {k: v for k, v in old_schema.items() if k not in ("properties", "required")}
        schema["type"] = "object"
        schema["properties"] = {
            f["name"]: _field_from_editor(f, old_props.get(f["name"], {}))
            for f in fields
            if isinstance(f, Mapping) and f.get("name")
        }
        wanted = [f["name"] for f in fields if f.get("required") and f.get("name")]
        kept = [name for name in old_schema.get("required") or [] if name in wanted]
        required = kept + [name for name in wanted if name not in kept]
        if required:
            schema["required"] = required
        out["schema"] = schema
    old_steps = {s.get("id"): s for s in previous.get("steps") or [] if isinstance(s, Mapping)}
    out["steps"] = []
    for index, step in enumerate(doc.get("steps") or []):
        try:
            out["steps"].append(_step_from_editor(step, old_steps))
        except EditorShapeError as exc:
            title = step.get("title") or step.get("id") or "" if isinstance(step, Mapping) else ""
            where = f"Step {index + 1}" + (f", {title}" if title else "")
            raise EditorShapeError(f"{where}: {str(exc)[:1].lower()}{str(exc)[1:]}") from exc
    return out


def _step_from_editor(step: Any, old_steps: Mapping[Any, Any]) -> Any:
    if not isinstance(step, Mapping):
        return step
    step = _durations(step, duration_from_editor)
    if step.get("mode") == "any":
        step.pop("mode")
    old = old_steps.get(step.get("id"))
    if step.get("on_reject") == "end" and not (isinstance(old, Mapping) and "on_reject" in old):
        step.pop("on_reject")  # the default, said only where the version said it
    if isinstance(old, Mapping) and old.get("kind") == step.get("kind"):
        shown = _SHOWN.get(str(step.get("kind")), set())
        for key, value in old.items():
            if key not in shown and key not in step:
                step[key] = value
        if isinstance(old.get("compensate"), Mapping) and "compensate" in step:
            step["compensate"] = {**old["compensate"], "activity": step["compensate"]}
        _keep_approver_conditions(step, old)
    return _prune(step)


def _keep_approver_conditions(step: dict[str, Any], old: Mapping[str, Any]) -> None:
    """The form does not show an approver's condition (its builder does): each approver
    keeps the one its place had, when it names the same kind of approver."""
    before = old.get("approvers")
    after = step.get("approvers")
    if not isinstance(before, list) or not isinstance(after, list):
        return
    for rule, was in zip(after, before, strict=False):
        same_kind = isinstance(was, Mapping) and set(was) - {"when"} == set(rule or ())
        if isinstance(rule, dict) and same_kind and "when" in was and "when" not in rule:
            rule["when"] = was["when"]


_COMMON = {"kind", "id", "title"}  # the condition: kept, then set by its builder
_SHOWN = {
    "approval": _COMMON
    | {"approvers", "mode", "quorum", "deadline", "reminders", "escalate_to", "on_reject"},
    "action": _COMMON | {"activity", "compensate", "timeout"},
    "wait": _COMMON | {"duration"},
    "signal": _COMMON | {"signal", "timeout"},
}


# -- errors at the field -------------------------------------------------------------------

_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


def error_key(path: str, editor_doc: Mapping[str, Any]) -> str:
    """django-jsonform's key of the editor field a definition path points at
    (``$.steps[2].approvers[0].group`` -> ``steps§2§approvers§0§group``); a path into
    the data schema points at that field of ``fields``. Unknown paths: the whole form."""
    parts: list[str] = [a or b for a, b in _PART.findall(path)]
    if parts[:2] == ["schema", "properties"] and len(parts) >= 3:
        names = [f.get("name") for f in editor_doc.get("fields") or [] if isinstance(f, Mapping)]
        if parts[2] in names:
            return JOIN.join(["fields", str(names.index(parts[2]))])
        return "fields"
    if parts and parts[0] == "schema":
        return "fields"
    if len(parts) >= 4 and parts[0] == "steps" and parts[2] == "compensate":
        parts = parts[:3]  # the editor shows the undo activity as one field
    if len(parts) >= 4 and parts[2] in ("reminders",) and len(parts) > 4:
        parts = parts[:4]
    return JOIN.join(parts)


def error_map(problems: Sequence[DefinitionError], editor_doc: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, list[str]] = {}
    for problem in problems:
        out.setdefault(error_key(problem.path, editor_doc), []).append(
            f"{problem.problem} ({problem.path})"
        )
    return out


def sample_data(definition: Mapping[str, Any]) -> dict[str, Any]:
    """Data that fits the definition's schema, to start a "try it" from."""
    schema = _schema(definition)
    out: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, Mapping):
            continue
        if prop.get("enum"):
            out[name] = prop["enum"][0]
        elif prop.get("type") in ("integer", "number"):
            out[name] = max(prop.get("minimum", 0), 100000)
        elif prop.get("type") == "boolean":
            out[name] = False
        elif prop.get("type") == "string":
            out[name] = "example"[: prop.get("maxLength", 7)]
    return out


def complete(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with exactly the fields ``schema`` shows (empty when unused): the
    editor draws a field only from a value that has it."""
    if "oneOf" in schema:
        options = schema["oneOf"]
        kind = value.get("kind") if isinstance(value, Mapping) else None
        chosen = next(
            (o for o in options if o.get("properties", {}).get("kind", {}).get("const") == kind),
            options[0],
        )
        return complete(value, chosen)
    kind = schema.get("type")
    if kind == "object":
        # Only the fields the form shows: the editor picks a step's kind by its set of
        # fields, and ``from_editor`` keeps the rest from the version edited.
        given = value if isinstance(value, Mapping) else {}
        return {
            name: sub["const"] if "const" in sub else complete(given.get(name), sub)
            for name, sub in (schema.get("properties") or {}).items()
        }
    if kind == "array":
        items = schema.get("items") or {}
        return [complete(v, items) for v in value] if isinstance(value, list) else []
    if value is not None:
        return value
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return None
    return schema.get("default", "")
