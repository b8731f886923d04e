"""How the engine's words read to people: amounts in currency units, steps and statuses
in words, and a workflow's history as sentences. Pure functions over plain values; the
views fetch what they need (names, the raw workflow template definition) in bulk."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.utils import timezone

from templates_engine import SUBMITTER_STEP
from templates_engine import events as ev
from templates_engine.events import EVENT_TYPES, cancelled_by
from templates_engine.money import convert

from ..notifications.format import EXPONENTS, INDIAN_GROUPING, SYMBOLS, money_format
from ..words import zones
from ..words.data import (
    KeptLists,
    code_words,
    currency_of,
    file_size,
    format_value,
    money_fields,
    row_fields,
)
from ..words.decisions import DECISIONS, END, ON, SUBMITTER, Outcome, outcome, outcome_at
from ..words.steps import (
    NOTHING_UNDONE,
    failure_sentence,
    humanise,
    nothing_undone,
    step_title,
    step_titles,
    undo_failure_sentence,
)

STATUS_WORDS = {
    "NEW": "Starting",
    "RUNNING": "In progress",
    "COMPENSATING": "Undoing its steps",
    "COMPLETED": "Approved",
    "APPROVED": "Approved",
    "REJECTED": "Rejected",
    "ROLLED_BACK": "Could not be completed",
    "COMPENSATION_FAILED": "Could not be completed; being fixed",
    "CANCELLED": "Cancelled",
    "WITHDRAWN": "Withdrawn",
}
DECISION_PAST = {
    "approve": "approved",
    "reject": "rejected",
    "send_back": "sent back",
    "delegate": "handed on",
}
EXCLUSION_REASONS = {
    "submitter": "submitted this request",
}


# -- names -------------------------------------------------------------------------------


def person(username: str | None, names: Mapping[str, str]) -> str:
    """A username as people call them: the first name when the directory has one."""
    if not username:
        return "The system"
    return names.get(username) or username


def handed_on(leaver: str, names: Mapping[str, str]) -> str:
    """The inbox's mark on a task someone who left handed on: ``handed on from Ivan
    (left)``; "" for any other task."""
    return f"handed on from {person(leaver, names)} (left)" if leaver else ""


# -- times -------------------------------------------------------------------------------


def when(at: dt.datetime | None, *, with_date: bool = True) -> str:
    """``2 Dec, 14:15 IST`` in the active time zone, which is named."""
    return zones.moment(at, with_date=with_date) if at is not None else ""


def day(at: dt.datetime | None) -> str:
    if at is None:
        return ""
    return zones.day_month(timezone.localtime(at))


# -- data --------------------------------------------------------------------------------


def field_order(schema: Mapping[str, Any] | None) -> list[str]:
    """The fields in the order people fill them: each amount followed by its currency,
    then the rest as declared (a stored schema may not keep its order: jsonb sorts)."""
    names = list(((schema or {}).get("properties") or {}).keys())
    money = money_fields(schema)
    ordered: list[str] = []
    for name in names:
        if name in money:
            ordered.append(name)
            if money[name] in names and money[name] not in ordered:
                ordered.append(money[name])
    return ordered + [n for n in names if n not in ordered]


def field_label(schema: Mapping[str, Any] | None, name: str) -> str:
    spec = ((schema or {}).get("properties") or {}).get(name)
    title = spec.get("title") if isinstance(spec, Mapping) else None
    if isinstance(title, str) and title:
        return title
    if name in money_fields(schema):  # amountPaise: the amount, not its minor unit
        return humanise(_MINOR_UNIT.sub("", name)) or "Amount"
    return humanise(name)


_MINOR_UNIT = re.compile(r"_?(paise|Paise|cents|Cents|minor|Minor|pence|Pence)$")


def data_rows(
    schema: Mapping[str, Any] | None, data: Mapping[str, Any], lists: KeptLists | None = None
) -> list[tuple[str, str]]:
    """(label, value) pairs in the schema's order; a currency field that a money field
    names is shown within the amount, not on its own; a kept list's key by its name."""
    money = money_fields(schema)
    hidden = {c for c in money.values() if c}
    order = field_order(schema)
    # Data the schema does not declare is shown too, except what only a machine reads:
    # an automated step's result (an object or a list) would show as code.
    order += [k for k in data if k not in order and not isinstance(data[k], Mapping | list)]
    return [
        (field_label(schema, name), format_value(schema, data, name, lists))
        for name in order
        if name in data and name not in hidden
    ]


def row_facts(
    schema: Mapping[str, Any] | None, data: Mapping[str, Any], lists: KeptLists | None = None
) -> str:
    """The fields the workflow template marks for an inbox row, as ``Department:
    Engineering`` (a kept list's key by its name)."""
    return " · ".join(
        f"{field_label(schema, n)}: {value}"
        for n in row_fields(schema)
        if (value := format_value(schema, data, n, lists))
    )


def receipts_words(count: int) -> str:
    """``2 receipts``; ``No receipt`` when there is none."""
    if not count:
        return "No receipt"
    return f"{count} receipt{'' if count == 1 else 's'}"


def approved_before(
    approved: Iterable[tuple[str, str]], names: Mapping[str, str], raw: Mapping[str, Any]
) -> str:
    """``Approved by Bob (Manager) and Victor (VP)``; "" when nobody approved yet."""
    said = [f"{person(u, names)} ({step_title(raw, s)})" for u, s in approved]
    return f"Approved by {_list(said)}" if said else ""


def key_figures(schema: Mapping[str, Any] | None, data: Mapping[str, Any]) -> str:
    """The amounts of the data, formatted: what an approver needs before opening it."""
    return " · ".join(
        format_value(schema, data, name) for name in money_fields(schema) if name in data
    )


def main_amount(
    schema: Mapping[str, Any] | None, data: Mapping[str, Any]
) -> tuple[int, str] | None:
    """The request's first amount as (minor units, currency): what a bulk approval adds
    up; None when it has none."""
    for name, currency_field in money_fields(schema).items():
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value, currency_of(data, currency_field).upper()
    return None


def money_parts(currencies: Iterable[str]) -> dict[str, dict[str, Any]]:
    """How ``money_format`` writes each currency, for the inbox's script to add amounts
    up the same way: symbol, decimals, and Indian grouping."""
    return {
        c: {
            "symbol": SYMBOLS.get(c, c),
            "exponent": EXPONENTS.get(c, 2),
            "indian": c in INDIAN_GROUPING,
        }
        for c in sorted(currencies)
    }


def request_words(subject: str, requester: str, figures: str) -> str:
    """``Expense claim R-8 from Alice, ₹45,000.00``: the request as a question or a
    decision's message names it."""
    text = subject
    if requester:
        text += f" from {requester}"
    if figures:
        text += f", {figures}"
    return text


def reject_question(subject: str, requester: str, figures: str, ends: Outcome) -> str:
    """``Reject Expense claim R-8 from Alice, ₹45,000.00? This ends the request.``: a
    rejection's confirmation names what is rejected, and what the rejection does
    (``ends``, its outcome)."""
    return ends.question_words(request_words(subject, requester, figures))


_COMPARISON = re.compile(
    r"data\.(?P<field>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<value>-?\d+|'[^']*'|\"[^\"]*\")"
)
_OPS = {">=": "≥", "<=": "≤", "==": "is", "!=": "is not", ">": ">", "<": "<"}


def rule_amount(minor: int, data: Mapping[str, Any], currency_field: str, base: str) -> str:
    """An amount a rule compares with: in the organisation's ``base`` currency, which
    conditions compare in (templates_engine.money); with no base currency, in the
    request's own."""
    return money_format(minor=minor, currency=base or currency_of(data, currency_field))


def conversion_base(history: Iterable[Any]) -> str:
    """The base currency a workflow's start recorded (its WorkflowStarted event's
    conversion), or "" for one that compared amounts as they were."""
    for entry in history:
        if entry.type == "WorkflowStarted":
            conversion = entry.payload.get("conversion")
            return str(conversion.get("base", "")) if isinstance(conversion, Mapping) else ""
    return ""


def conversion_words(
    schema: Mapping[str, Any] | None,
    data: Mapping[str, Any],
    conversion: Mapping[str, Any] | None,
) -> str:
    """``$999.00 ≈ ₹83,117 at 83.20 on 6 Dec 2026``: the request's first amount in
    another currency than the base, as the rules compare it; "" when there is none."""
    if not conversion:
        return ""
    base = str(conversion.get("base", ""))
    rates = conversion.get("rates") or {}
    for name, currency_field in money_fields(schema).items():
        value, code = data.get(name), currency_of(data, currency_field).upper()
        rate = rates.get(code) if isinstance(rates, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool) and isinstance(rate, Mapping):
            shown = money_format(minor=value, currency=code)
            converted = money_format(
                minor=convert(value, str(rate["factor"])), currency=base, whole_units=True
            )
            on = dt.date.fromisoformat(str(rate["on"]))
            return f"{shown} ≈ {converted} at {rate_figure(str(rate['rate']))} on {on:%-d %b %Y}"
    return ""


def rate_figure(rate: str) -> str:
    """``83.2`` -> ``83.20``: a rate with at least two decimals, as people write them."""
    value = Decimal(rate)
    places = max(2, -int(value.normalize().as_tuple().exponent))
    return f"{value:.{places}f}"


def condition_words(
    condition: str | None,
    schema: Mapping[str, Any] | None,
    data: Mapping[str, Any],
    base: str = "",
) -> str:
    """``data.amountPaise > 10000000`` -> ``amount > ₹1,00,000.00``: field titles for
    names, amounts in currency units (the ``base`` currency's), enum values in words."""
    if not condition:
        return ""
    money = money_fields(schema)

    def one(m: re.Match[str]) -> str:
        name, op, value = m["field"], m["op"], m["value"]
        label = field_label(schema, name).lower()
        if name in money and value.lstrip("-").isdigit():
            shown = rule_amount(int(value), data, money[name], base)
        elif value[:1] in "'\"":
            raw = value[1:-1]
            shown = code_words(raw)
        else:
            shown = value
        return f"{label} {_OPS[op]} {shown}"

    text = _COMPARISON.sub(one, condition)
    text = re.sub(
        r"data\.([A-Za-z_][A-Za-z0-9_]*)", lambda m: field_label(schema, m[1]).lower(), text
    )
    return text.replace(" and ", " and ").replace(" or ", " or ")


# -- approvers chosen by rules -------------------------------------------------------------

_SIDES = {">": "above", ">=": "from", "<": "below", "<=": "up to"}


def _money_side(
    condition: str, schema: Mapping[str, Any] | None, data: Mapping[str, Any], base: str = ""
) -> tuple[str, str, str] | None:
    """(field label, side, amount) when ``condition`` is one comparison of a money
    field with an amount (``data.amountPaise > 10000000``), else None."""
    m = _COMPARISON.fullmatch(condition.strip())
    money = money_fields(schema)
    if m is None or m["field"] not in money or m["op"] not in _SIDES:
        return None
    if not m["value"].lstrip("-").isdigit():
        return None
    amount = rule_amount(int(m["value"]), data, money[m["field"]], base)
    return field_label(schema, m["field"]).lower(), _SIDES[m["op"]], amount


def approver_rule_words(rule: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """One approver rule: ``the manager``, ``finance group``, ``Victor``."""
    if "manager" in rule:
        return "the manager"
    if "group" in rule:
        key = str(rule["group"])
        return f"the {names.get(GROUP_NAME + key) or humanise(key)} group"
    if "user" in rule:
        return person(str(rule["user"]), names)
    return ""


def approver_lines(
    step: Mapping[str, Any],
    names: Mapping[str, str],
    schema: Mapping[str, Any] | None,
    data: Mapping[str, Any],
    base: str = "",
) -> list[str]:
    """An approval step's approvers in words, a line each: those always asked together
    (``the manager and finance group``; ``or`` unless all must approve), then each one
    chosen by a condition: ``Victor too, above ₹1,00,000.00``."""
    rules = [r for r in step.get("approvers") or [] if isinstance(r, Mapping)]
    always = [approver_rule_words(r, names) for r in rules if not r.get("when")]
    lines = [(" and " if step.get("mode") == "all" else " or ").join(w for w in always if w)]
    for rule in rules:
        condition = rule.get("when")
        if not condition or not isinstance(condition, str):
            continue
        side = _money_side(condition, schema, data, base)
        phrase = (
            f"{side[1]} {side[2]}"
            if side
            else f"if {condition_words(condition, schema, data, base)}"
        )
        too = " too," if lines[0] else ","
        lines.append(f"{approver_rule_words(rule, names)}{too} {phrase}")
    return [line for line in lines if line]


def approver_reason(
    condition: str, schema: Mapping[str, Any] | None, data: Mapping[str, Any], base: str = ""
) -> str:
    """Why a conditional approver was asked: ``the amount is above ₹1,00,000.00``."""
    side = _money_side(condition, schema, data, base)
    if side:
        return f"the {side[0]} is {side[1]} {side[2]}"
    return condition_words(condition, schema, data, base)


# ``names`` may carry a group's name under this prefix and its key: the page looks the
# groups a workflow template names up with its people (``named_groups``).
GROUP_NAME = "group:"


def _named(raw_definition: Mapping[str, Any], rule_kind: str) -> set[str]:
    return {
        str(rule[rule_kind])
        for step in raw_definition.get("steps") or []
        if isinstance(step, Mapping)
        for rule in step.get("approvers") or []
        if isinstance(rule, Mapping) and isinstance(rule.get(rule_kind), str)
    }


def named_groups(raw_definition: Mapping[str, Any]) -> set[str]:
    """The group keys a workflow template's approval steps name."""
    return _named(raw_definition, "group")


def named_approvers(raw_definition: Mapping[str, Any]) -> set[str]:
    """The people a workflow template's approval steps name, for looking up their names."""
    return _named(raw_definition, "user")


# -- statuses ----------------------------------------------------------------------------


def status_label(public_status: str, raw_definition: Mapping[str, Any] | None = None) -> str:
    """A short badge: ``PENDING_FINANCE`` -> ``Waiting: Finance`` (the step's title when
    the workflow template is given); ``PENDING_SUBMITTER`` -> ``Sent back for changes``;
    ``APPROVED`` -> ``Approved``."""
    if public_status == "PENDING_SUBMITTER":
        return "Sent back for changes"
    if public_status.startswith("PENDING_"):
        step = public_status.removeprefix("PENDING_")
        titles = {k.upper(): v for k, v in step_titles(raw_definition or {}).items()}
        return "Waiting: " + (titles.get(step) or humanise(step))
    return STATUS_WORDS.get(public_status, humanise(public_status))


def draft_saved(title: str) -> str:
    """What saving a draft did, and what it did not."""
    return f"Saved a draft of your {title}. Nobody sees it until you submit it."


def draft_incomplete(labels: Iterable[str]) -> str:
    """Why a draft could not be submitted yet: the fields still empty, by their labels."""
    names = [f"“{label}”" for label in labels]
    if not names:
        return (
            "This draft could not be submitted: some of its values no longer fit the form. "
            "Check them below and submit again."
        )
    fields = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"This draft is not complete yet: fill in {fields}, then submit it."


# What a decision or a submission led to, when the request ended.
_NOW = {
    "COMPLETED": "It is now approved.",
    "REJECTED": "It is now rejected.",
    "CANCELLED": "It is now cancelled.",
    "COMPENSATING": "A step did not pass, so the steps already done are being undone.",
    "ROLLED_BACK": "It could not be completed; any step already done was undone.",
    "COMPENSATION_FAILED": "It could not be completed; an administrator is finishing it.",
}


def next_phrase(*, status: str, step_title: str, step: str | None = None) -> str:
    """What a decision or a submission led to: ``It now waits for the Finance step.``;
    ``It is back with the requester for changes.`` when ``step`` is the submitter's."""
    if status == "RUNNING":
        if step == SUBMITTER_STEP:
            return "It is back with the requester for changes."
        return f"It now waits for the {step_title} step." if step_title else "It is in progress."
    return _NOW.get(status) or f"It is now {STATUS_WORDS.get(status, humanise(status)).lower()}."


def status_sentence(
    *,
    status: str,
    step: str,
    assignees: Iterable[tuple[str, str | None]],
    submitter: str | None,
    since: dt.datetime | None,
    due: dt.datetime | None,
    names: Mapping[str, str],
    now: dt.datetime | None = None,
) -> str:
    """``Waiting for Fiona (Finance) since 14:15 UTC, due 2 Dec``; ``Approved``;
    ``Sent back to Alice for changes since ...``."""
    if status != "RUNNING":
        return STATUS_WORDS.get(status, humanise(status))
    people = list(assignees)
    if not people:
        return f"In progress: {step}" if step else "In progress"
    tail = ""
    if since is not None:
        tail += f" since {when(since, with_date=since.date() != (now or timezone.now()).date())}"
    if due is not None:
        overdue = due < (now or timezone.now())
        tail += f", {'overdue since' if overdue else 'due'} {day(due)}"
    if submitter and [u for u, _ in people] == [submitter]:
        return f"Sent back to {person(submitter, names)} for changes{tail}"
    who = ", ".join(person(u, names) + (f" for {person(b, names)}" if b else "") for u, b in people)
    where = f" ({step})" if step else ""
    return f"Waiting for {who}{where}{tail}"


# -- the timeline ------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    """One sentence of a workflow's history."""

    kind: str  # the event type, for styling and tests
    text: str
    at: dt.datetime
    at_text: str
    comment: str = ""
    file: str = ""  # a FileAttached line's SHA-256, for its download link


@dataclass(frozen=True)
class Context:
    """What the sentences need beyond the events themselves."""

    raw_definition: Mapping[str, Any]
    data: Mapping[str, Any]
    names: Mapping[str, str]
    submitter: str | None = None
    base: str = ""  # the currency the request's rules compared amounts in, if any

    @property
    def schema(self) -> Mapping[str, Any] | None:
        schema = self.raw_definition.get("schema")
        return schema if isinstance(schema, Mapping) else None

    def step(self, step: str | None) -> str:
        return step_title(self.raw_definition, step)

    def who(self, username: str | None) -> str:
        return person(username, self.names)

    def outcome(self, step: str, decision: str, leads_to: str | None = None) -> Outcome:
        """The words of ``decision`` at ``step``: where the events say it led
        (``leads_to``), else where the workflow template sends it."""
        requester = self.who(self.submitter) if self.submitter else ""
        if leads_to is None:
            return outcome_at(self.raw_definition, step, decision, requester=requester)
        return outcome(
            decision,
            leads_to,
            requester=requester,
            step_title=self.step(step),
            target_title=self.step(leads_to) if leads_to not in (END, SUBMITTER, ON) else "",
        )

    def when_of(self, step: str) -> str | None:
        for s in self.raw_definition.get("steps") or []:
            if isinstance(s, Mapping) and s.get("id") == step:
                cond = s.get("when")
                return cond if isinstance(cond, str) else None
        return None

    def asked_because(self, step: str, slot: object) -> str:
        """Why the approver on ``slot`` (the index of the step's approver entry) was
        asked, when a condition chose them: ``the amount is above ₹1,00,000.00``."""
        for s in self.raw_definition.get("steps") or []:
            if isinstance(s, Mapping) and s.get("id") == step:
                rules = s.get("approvers") or []
                rule = rules[slot] if isinstance(slot, int) and 0 <= slot < len(rules) else None
                cond = rule.get("when") if isinstance(rule, Mapping) else None
                return (
                    approver_reason(cond, self.schema, self.data, self.base)
                    if isinstance(cond, str)
                    else ""
                )
        return ""


def _list(names: Iterable[str]) -> str:
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _exclusion(why: str, ctx: Context) -> str:
    if why.startswith("already approved "):
        return f"already approved the {ctx.step(why.removeprefix('already approved '))} step"
    return humanise(why).lower()


# Why the steps already done are undone, by the status the workflow will end in (the
# engine's own reason names people by username and steps by id: not for people).
_UNDO_BECAUSE = {
    "REJECTED": "as the request was rejected",
    "CANCELLED": "as the request was cancelled",
    "ROLLED_BACK": "as a step did not pass",
}


# What a timer coming due meant, by its kind (the events after it say what it did).
_TIMER_CAME_DUE = {
    "reminder": "The time to remind about the {step} step came",
    "deadline": "The deadline of the {step} step passed",
    "wait": "The wait of the {step} step ended",
    "signal_timeout": "The {step} step stopped waiting for its signal",
    "heartbeat": "The automated task of the {step} step stopped reporting progress",
}


@dataclass(frozen=True)
class _Said:
    """One history event as its sentence function reads it: the payload, the step's
    title and the people around it, worked out once for every kind."""

    p: Mapping[str, Any]
    step: str  # the title of the step the event names ("" when it names none)
    actor: str | None
    behalf: str | None  # whom the actor acted for, by username
    ctx: Context

    @property
    def by(self) -> str:
        return self.ctx.who(self.actor) if self.actor else "The system"

    @property
    def author(self) -> str:
        """Who did it: the payload's actor, else the event's."""
        return self.ctx.who(self.p.get("actor") or self.actor)

    @property
    def author_or_system(self) -> str:
        return self.author if (self.p.get("actor") or self.actor) else "The system"


def sentence(
    kind: str,
    payload: Mapping[str, Any],
    *,
    actor: str | None,
    on_behalf_of: str | None,
    ctx: Context,
) -> str:
    """The sentence for one history event: its class's entry in ``SENTENCES``, else
    the event's type in words."""
    said = _Said(
        p=payload,
        step=ctx.step(payload.get("step")),
        actor=actor,
        behalf=on_behalf_of or payload.get("on_behalf_of"),
        ctx=ctx,
    )
    cls = EVENT_TYPES.get(kind)
    say = SENTENCES.get(cls) if cls is not None else None
    return say(said) if say is not None else humanise(kind)


# -- one sentence function per event class ---------------------------------------------


def _workflow_started(e: _Said) -> str:
    p, ctx = e.p, e.ctx
    origin = p.get("origin") or {}
    if origin.get("schedule") is not None:
        made_by = ctx.who(origin.get("made_by"))
        return f"Started by the schedule '{origin.get('name', '')}' made by {made_by}"
    if origin.get("restarted_from") is not None:
        made_by = ctx.who(origin.get("made_by"))
        submitter = ctx.who(p.get("submitter") or e.actor)
        return (
            f"{made_by} started this again for {submitter}, as a new request in place "
            f"of one that could not be completed: {origin.get('reason', '')}"
        )
    return f"{ctx.who(p.get('submitter') or e.actor)} submitted the request"


def _step_skipped(e: _Said) -> str:
    ctx = e.ctx
    cond = condition_words(ctx.when_of(e.p.get("step", "")), ctx.schema, ctx.data, ctx.base)
    if cond:
        return f"The {e.step} step was skipped: the condition {cond} did not hold"
    return f"The {e.step} step was skipped: its condition did not hold"


def _approvers_excluded(e: _Said) -> str:
    parts = []
    for who, why in e.p.get("excluded") or []:
        name = e.ctx.who(who)
        reason = EXCLUSION_REASONS.get(why) or _exclusion(str(why), e.ctx)
        parts.append(f"{name} was not asked at the {e.step} step: they {reason}")
    text = "; ".join(parts) + " (segregation of duties)"
    if e.p.get("fallback"):
        text += "; the step went to its fallback approvers"
    return text


def _approval_requested(e: _Said) -> str:
    p, ctx = e.p, e.ctx
    people = [
        ctx.who(a.get("user"))
        + (f" (for {ctx.who(a['on_behalf_of'])})" if a.get("on_behalf_of") else "")
        + (f" (as {why})" if (why := ctx.asked_because(p.get("step", ""), a.get("slot"))) else "")
        for a in p.get("assignments") or []
    ]
    need = p.get("required") or 1
    mode = p.get("mode")
    ask = "all of" if mode == "all" and len(people) > 1 else ""
    text = f"The {e.step} step asked {ask + ' ' if ask else ''}{_list(people) or 'nobody'}"
    if mode == "quorum":
        text += f" ({need} approvals needed)"
    return text


def _decision_recorded(e: _Said) -> str:
    p, ctx, behalf = e.p, e.ctx, e.behalf
    decision = p.get("decision", "")
    who = e.author
    if decision in DECISIONS:
        done = ctx.outcome(str(p.get("step") or ""), decision, p.get("leads_to")).past
        return f"{who} {done}" + (f" on behalf of {ctx.who(behalf)}" if behalf else "")
    verb = DECISION_PAST.get(decision, humanise(decision).lower())
    if behalf:
        return f"{who} {verb} the {e.step} step on behalf of {ctx.who(behalf)}"
    return f"{who} {verb} the {e.step} step"


def _task_reassigned(e: _Said) -> str:
    frm, to = e.ctx.who(e.p.get("from_user")), e.ctx.who(e.p.get("to_user"))
    why = e.p.get("reason")
    if why == "delegated":
        return f"{frm} handed the {e.step} step to {to}"
    if why == "escalated":
        return f"The {e.step} step was escalated from {frm} to {to}"
    if why == "handed_on":
        return f"{frm} left: the {e.step} step was handed on to {to}"
    return f"{e.by} reassigned the {e.step} step from {frm} to {to}"


def _approver_added(e: _Said) -> str:
    p, ctx = e.p, e.ctx
    added = ctx.who(p.get("user"))
    text = (
        f"{e.author_or_system} added {added} as an approver on the {e.step} step: "
        f"{p.get('reason', '')}"
    )
    held = [a["user"] for a in p.get("assignments") or [] if a.get("on_behalf_of")]
    stand_in = held[0] if held else ""
    if stand_in:
        text += f" ({ctx.who(stand_in)} holds the task for {added}, who is away)"
    return text


def _timer_fired(e: _Said) -> str:
    came_due = _TIMER_CAME_DUE.get(e.p.get("kind", ""), "A timer of the {step} step went off")
    return came_due.format(step=e.step)


def _reminder_sent(e: _Said) -> str:
    reminded = [e.ctx.who(u) for u in e.p.get("users") or []]
    were = "were" if len(reminded) > 1 else "was"
    return f"{_list(reminded) or 'Nobody'} {were} reminded of the {e.step} step"


def _escalated(e: _Said) -> str:
    takers = _list([e.ctx.who(a.get("user")) for a in e.p.get("assignments") or []])
    how = "taken over by" if e.p.get("replace", True) else "also given to"
    return f"The {e.step} step was overdue and {how} {takers}"


def _step_completed(e: _Said) -> str:
    # ``compensate`` says the step has an undo to run if the request turns back; an
    # undo that ran is its own event (ActivitySucceeded with ``undo``).
    return f"The {e.step} step was completed"


def _sent_back(e: _Said) -> str:
    target = e.ctx.step(e.p.get("to_step")) if e.p.get("to_step") else ""
    if target:
        return f"The request went back to the {target} step"
    return f"The request was sent back to {e.ctx.who(e.ctx.submitter)} for changes"


def _resubmitted(e: _Said) -> str:
    return f"{e.author} changed the request and resubmitted it"


def _activity_scheduled(e: _Said) -> str:
    action = humanise(e.p.get("activity", "")).lower()
    attempt = e.p.get("attempt") or 1
    what = "Undoing" if e.p.get("undo") else "Running"
    return f"{what} {action} for the {e.step} step" + (
        f" (attempt {attempt})" if attempt > 1 else ""
    )


def _activity_heartbeat(e: _Said) -> str:
    return f"The {e.step} step reported that it is still working"


def _activity_succeeded(e: _Said) -> str:
    what = "was undone" if e.p.get("undo") else "succeeded"
    return f"The {e.step} step {what}" + (
        f" on attempt {e.p['attempt']}" if (e.p.get("attempt") or 1) > 1 else ""
    )


def _activity_failed(e: _Said) -> str:
    # What went wrong in words is the administrators' (their page shows the error);
    # people are told that it did not work, and what happens next.
    what = f"Undoing the {e.step} step" if e.p.get("undo") else f"The {e.step} step"
    text = f"{what} did not work on attempt {e.p.get('attempt') or 1}"
    if e.p.get("retry_delay") is not None:
        text += "; it will be tried again"
    return text


def _wait_started(e: _Said) -> str:
    return f"The {e.step} step is waiting"


def _signal_awaited(e: _Said) -> str:
    return f"The {e.step} step is waiting for {humanise(e.p.get('name', '')).lower()}"


def _signal_arrived_early(e: _Said) -> str:
    return early_signal_words(e.p)


def _signal_received(e: _Said) -> str:
    if e.p.get("early"):
        what = humanise(e.p.get("name", "")).lower()
        return f"The {e.step} step began and used {what}, which had arrived early"
    return f"{humanise(e.p.get('name', ''))} was received" + (
        f" by the {e.step} step" if e.p.get("step") else ""
    )


def _step_failed(e: _Said) -> str:
    return failure_sentence(
        e.ctx.raw_definition,
        str(e.p.get("step") or ""),
        str(e.p.get("error") or ""),
        str(e.p.get("message") or ""),
    )


def _compensation_started(e: _Said) -> str:
    ending = str(e.p.get("outcome") or "")
    canceller = cancelled_by(str(e.p.get("reason") or "")) if ending == "CANCELLED" else None
    if canceller is not None and canceller[0] and canceller[0] == e.ctx.submitter:
        return "Undoing the steps already done, as the request was withdrawn"
    return "Undoing the steps already done, " + _UNDO_BECAUSE.get(ending, "as a step did not pass")


def _compensation_failed(e: _Said) -> str:
    return undo_failure_sentence(e.ctx.raw_definition, str(e.p.get("step") or ""))


def _file_attached(e: _Said) -> str:
    size = file_size(int(e.p.get("size") or 0))
    return f"{e.author} attached {e.p.get('name', 'a file')} ({size})"


def _workflow_completed(e: _Said) -> str:
    return "The request was approved"


def _workflow_rejected(e: _Said) -> str:
    return "The request was rejected"


def _workflow_rolled_back(e: _Said) -> str:
    if e.p.get("nothing_undone"):
        return "The request could not be completed; " + NOTHING_UNDONE
    return "The request could not be completed; the steps already done were undone"


def _workflow_cancelled(e: _Said) -> str:
    # the submitter's own cancel is a withdrawal
    submitter = e.ctx.submitter
    did = "withdrew" if submitter and e.p.get("actor") == submitter else "cancelled"
    reason = f": {e.p['reason']}" if e.p.get("reason") else ""
    return f"{e.author_or_system} {did} the request{reason}"


def _comment_added(e: _Said) -> str:
    return comment_words(e.p, actor=e.actor, ctx=e.ctx)


def comment_words(p: Mapping[str, Any], *, actor: str | None, ctx: Context) -> str:
    """Who wrote a comment, and to whom: "Bob asked Farah" (the text, shown after it,
    ends with a question mark), "Bob wrote to Farah", "Alice wrote"."""
    who = ctx.who(p.get("actor") or actor)
    asked = str(p.get("comment") or "").rstrip().endswith("?")
    named = _list([ctx.who(u) for u in p.get("mentions") or [] if isinstance(u, str)])
    if named:
        return f"{who} {'asked' if asked else 'wrote to'} {named}"
    return f"{who} {'asked' if asked else 'wrote'}"


# What an organisation admin did (the engine's operations): who, what, and the reason
# they gave.


def _by_admin(e: _Said, did: str) -> str:
    return f"{e.author_or_system} {did}: {e.p.get('reason', '')}"


def _step_retried(e: _Said) -> str:
    return _by_admin(e, f"ran the request again from the {e.ctx.step(e.p.get('from_step'))} step")


def _compensation_retried(e: _Said) -> str:
    return _by_admin(e, f"retried undoing the {e.step} step")


def _compensation_resolved(e: _Said) -> str:
    ending = humanise(str(e.p.get("outcome", ""))).lower()
    return _by_admin(
        e, f"marked the undo of the {e.step} step as done by hand (the request ends {ending})"
    )


def _workflow_restarted(e: _Said) -> str:
    return _by_admin(e, "started the request again as a new request, in place of this one")


def _undo_retried(e: _Said) -> str:
    return _by_admin(e, f"tried undoing the {e.step} step again")


def _compensation_settled(e: _Said) -> str:
    if not e.p.get("by_hand", True):
        return (
            "Every undo left succeeded when retried, so the failed roll-back is settled; "
            "the request stays marked as a failed roll-back"
        )
    return _by_admin(
        e, f"marked the undo of the {e.step} step as done by hand, settling the roll-back"
    )


def _timer_rearmed(e: _Said) -> str:
    return _by_admin(e, "re-armed a timer that had stopped")


# Every event class of the engine has its sentence here (a test holds the table to
# ``templates_engine.events.EVENT_TYPES``); a new event gets a function and a row.
SENTENCES: dict[type[ev.Event], Callable[[_Said], str]] = {
    ev.WorkflowStarted: _workflow_started,
    ev.StepSkipped: _step_skipped,
    ev.ApproversExcluded: _approvers_excluded,
    ev.ApprovalRequested: _approval_requested,
    ev.DecisionRecorded: _decision_recorded,
    ev.TaskReassigned: _task_reassigned,
    ev.ApproverAdded: _approver_added,
    ev.TimerFired: _timer_fired,
    ev.ReminderSent: _reminder_sent,
    ev.Escalated: _escalated,
    ev.StepCompleted: _step_completed,
    ev.SentBack: _sent_back,
    ev.Resubmitted: _resubmitted,
    ev.ActivityScheduled: _activity_scheduled,
    ev.ActivityHeartbeat: _activity_heartbeat,
    ev.ActivitySucceeded: _activity_succeeded,
    ev.ActivityFailed: _activity_failed,
    ev.WaitStarted: _wait_started,
    ev.SignalAwaited: _signal_awaited,
    ev.SignalArrivedEarly: _signal_arrived_early,
    ev.SignalReceived: _signal_received,
    ev.StepFailed: _step_failed,
    ev.CompensationStarted: _compensation_started,
    ev.CompensationFailed: _compensation_failed,
    ev.FileAttached: _file_attached,
    ev.WorkflowCompleted: _workflow_completed,
    ev.WorkflowRejected: _workflow_rejected,
    ev.WorkflowRolledBack: _workflow_rolled_back,
    ev.WorkflowCancelled: _workflow_cancelled,
    ev.CommentAdded: _comment_added,
    ev.StepRetried: _step_retried,
    ev.CompensationRetried: _compensation_retried,
    ev.CompensationResolved: _compensation_resolved,
    ev.WorkflowRestarted: _workflow_restarted,
    ev.UndoRetried: _undo_retried,
    ev.CompensationSettled: _compensation_settled,
    ev.TimerRearmed: _timer_rearmed,
}


# Events that already say which timer came due: the TimerFired line before them would
# only repeat it ("Bob was reminded ...", "... was overdue and taken over by ...").
_SAY_THEIR_TIMER = frozenset({"ReminderSent", "Escalated"})


def early_signal_words(
    payload: Mapping[str, Any], *, used: bool = False, finished: bool = False
) -> str:
    """A signal kept because it came before any step waited for it: whether a step
    used it (``used``), and if not, whether one still may (not ``finished``)."""
    name = humanise(payload.get("name", ""))
    if used:
        return f"{name} arrived early; used when the step began"
    if finished:
        return f"{name} arrived early; it was not used"
    return f"{name} arrived early; not used yet"


# A workflow that reached one of these will use no more early signals.
_FINISHING = frozenset(
    {
        "WorkflowCompleted",
        "WorkflowRejected",
        "WorkflowRolledBack",
        "CompensationFailed",
        "WorkflowCancelled",
    }
)


def _early_signals_used(entries: list[Any]) -> set[int]:
    """Indexes of the early signals a step used: each ``SignalReceived`` marked early
    took the oldest kept one of its name, as the engine does."""
    kept: dict[str, list[int]] = {}
    used: set[int] = set()
    for i, e in enumerate(entries):
        if e.type == "SignalArrivedEarly":
            kept.setdefault(str(e.payload.get("name")), []).append(i)
        elif e.type == "SignalReceived" and e.payload.get("early"):
            waiting = kept.get(str(e.payload.get("name"))) or []
            if waiting:
                used.add(waiting.pop(0))
    return used


def timeline(entries: Iterable[Any], ctx: Context) -> list[Line]:
    """Sentences for ``workflow_history`` entries (seq, type, actor, on_behalf_of, at,
    comment, payload)."""
    lines = []
    entries = list(entries)
    used = _early_signals_used(entries)
    finished = any(e.type in _FINISHING for e in entries)
    for i, (e, after) in enumerate(zip(entries, [*entries[1:], None], strict=True)):
        if e.type == "SignalArrivedEarly":
            text = early_signal_words(e.payload, used=i in used, finished=finished)
            lines.append(Line(e.type, text, e.at, when(e.at), e.comment or ""))
            continue
        if (
            e.type == "SignalAwaited"
            and after is not None
            and after.type == "SignalReceived"
            and after.payload.get("early")
        ):
            continue  # it never waited: the next line says it began and used the signal
        if (
            e.type == "TimerFired"
            and after is not None
            and after.type in _SAY_THEIR_TIMER
            and after.payload.get("timer") == e.payload.get("key")
        ):
            continue
        if after is not None and nothing_undone(e.type, after.type):
            continue  # it undid nothing: the ending says so
        if e.type == "SentBack" and i and _turned_back(entries[i - 1]):
            continue  # the decision's line says where it went
        payload = e.payload
        if e.type == "WorkflowCancelled" and not payload.get("actor"):
            payload = {**payload, **_cancelled_after_undo(entries[:i])}
        if _turned_back(e):
            payload = {**payload, "leads_to": _led_to(after)}
        if i and nothing_undone(entries[i - 1].type, e.type):
            payload = {**payload, "nothing_undone": True}
        text = sentence(e.type, payload, actor=e.actor, on_behalf_of=e.on_behalf_of, ctx=ctx)
        sha = str(e.payload.get("sha256") or "") if e.type == "FileAttached" else ""
        lines.append(Line(e.type, text, e.at, when(e.at), e.comment or "", sha))
    return lines


def _cancelled_after_undo(before: list[Any]) -> dict[str, Any]:
    """Who cancelled a request that ended once its undo ran, and why: what the cancel
    recorded when it started the undo (the ending itself names nobody)."""
    for e in reversed(before):
        if e.type == "CompensationStarted" and e.payload.get("outcome") == "CANCELLED":
            by = cancelled_by(str(e.payload.get("reason") or ""))
            if by is not None:
                return {"actor": by[0], "reason": by[1]}
    return {}


def _turned_back(e: Any) -> bool:
    return e.type == "DecisionRecorded" and e.payload.get("decision") in ("reject", "send_back")


def _led_to(after: Any) -> str:
    """Where a rejection or a send-back led, by the event after it: back (to a step, or
    to the submitter), or else the request ended."""
    if after is not None and after.type == "SentBack":
        return str(after.payload.get("to_step") or SUBMITTER)
    return END


def cancelled_sentence(entries: Iterable[Any], ctx: Context) -> str:
    """How a cancelled request ended, in the status's place: ``Withdrawn by Alice: no
    longer needed`` or ``Cancelled by Olga: duplicate``; "" when it was not cancelled."""
    entries = list(entries)
    for i in range(len(entries) - 1, -1, -1):
        e = entries[i]
        if e.type != "WorkflowCancelled":
            continue
        p = (
            e.payload
            if e.payload.get("actor")
            else {**e.payload, **_cancelled_after_undo(entries[:i])}
        )
        actor = p.get("actor") or None
        how = "Withdrawn" if actor and actor == ctx.submitter else "Cancelled"
        text = f"{how} by {ctx.who(actor)}" if actor else how
        return text + (f": {p['reason']}" if p.get("reason") else "")
    return ""


@dataclass(frozen=True)
class SentBackNote:
    """Why a request came back to the person it waits for: who sent it back, from
    which step, and the reason or question they wrote (blank when none)."""

    text: str
    comment: str


def sent_back_note(entries: Iterable[Any], ctx: Context) -> SentBackNote | None:
    """For a request that waits where a rejection or a send-back put it (the submitter's
    changes, or an earlier step), who sent it back and why; None when it is not waiting
    after a send-back (the step it came back to was completed, or it was resubmitted)."""
    entries = list(entries)
    last = next((i for i in range(len(entries) - 1, -1, -1) if entries[i].type == "SentBack"), None)
    if last is None:
        return None
    if any(e.type in ("StepCompleted", "Resubmitted") for e in entries[last + 1 :]):
        return None
    sent = entries[last].payload
    decision = next((e for e in reversed(entries[:last]) if e.type == "DecisionRecorded"), None)
    if decision is None:
        return None
    who = ctx.who(decision.payload.get("actor") or decision.actor)
    step = ctx.step(sent.get("step"))
    target = f"the {ctx.step(sent['to_step'])} step" if sent.get("to_step") else "you"
    asks = " with a question" if sent.get("to_step") else ""
    if decision.payload.get("decision") == "reject":
        asks = ""
    text = f"{who} sent it back to {target} from the {step} step{asks}"
    comment = decision.comment or decision.payload.get("comment") or ""
    return SentBackNote(text + ("" if comment else ", without a comment"), comment)


def usernames_in(entries: Iterable[Any]) -> set[str]:
    """Every username a history mentions, so their names can be fetched in one query."""
    out: set[str] = set()
    for e in entries:
        for value in (e.actor, e.on_behalf_of):
            if value:
                out.add(value)
        p = e.payload
        for key in ("actor", "submitter", "from_user", "to_user", "on_behalf_of"):
            if isinstance(p.get(key), str):
                out.add(p[key])
        for a in p.get("assignments") or []:
            out.update(v for v in (a.get("user"), a.get("on_behalf_of")) if isinstance(v, str))
        out.update(u for u in p.get("users") or [] if isinstance(u, str))
        out.update(u for u in p.get("mentions") or [] if isinstance(u, str))
        out.update(pair[0] for pair in p.get("excluded") or [] if pair)
        origin = p.get("origin")
        if isinstance(origin, Mapping) and isinstance(origin.get("made_by"), str):
            out.add(origin["made_by"])
    return out


# The role groups (access.Role) by what people call them; other groups keep their names.
ROLE_GROUP_WORDS = {
    "finance-admins": "Finance admins",
    "auditors": "Auditors",
    "org-admins": "Organisation admins",
    "integrations": "Other systems' accounts",
}


def group_words(name: str) -> str:
    """A Django group as a person reads it: a role group by what it is, any other group
    by its name."""
    return ROLE_GROUP_WORDS.get(name, name)
