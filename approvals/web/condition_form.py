"""The condition builders of the workflow template editor, as a plain server-side form:
one builder per step (its ``when``) and per approver of an approval step (a
rule-chosen approver's ``when``). Each posts ``<prefix>-join`` and rows
``<prefix>-<n>-field|op|value``, or ``<prefix>-expr`` when the condition is an
expression the rows cannot show; ``<prefix>-shown`` says the builder was on the page.

``builders`` draws them from a definition (and what was posted, to show it back);
``apply`` writes what was posted into a definition, with each problem in words and
the anchor of the builder at fault."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..notifications.format import CURRENCY_NAMES, EXPONENTS, SYMBOLS
from ..words.data import DEFAULT_CURRENCY
from . import condition_builder as cb
from .present import approver_rule_words, step_titles

BLANK_ROWS = 1  # an empty row to add a comparison without script
BASE_WORDS = (
    "Amounts are compared in {name} ({code}), the organisation's base currency: a "
    "request in another currency is converted at the rate recorded when it is submitted."
)
NO_BASE_WORDS = (
    "The organisation has no base currency yet: amounts are compared as they are "
    "entered, whatever their currency. A finance admin sets one under Exchange rates."
)


@dataclass
class RowView:
    n: int
    field: str
    op: str
    value: str
    kind: str  # the chosen field's kind, for the value's widget ("" for none)
    choices: tuple[str, ...] = ()


@dataclass
class Builder:
    prefix: str
    heading: str  # "Step 2, VP" / "Step 2, VP: Victor"
    join: str = "all"
    rows: list[RowView] = field(default_factory=list)
    expression: str | None = None  # set when the condition is shown as an expression
    error: str = ""
    optional: bool = False  # an approver's: folded while it has no condition


@dataclass
class Builders:
    items: list[Builder]
    fields: list[cb.Field]
    operators: dict[str, str]
    field_list: list[str]
    joins: dict[str, str] = field(default_factory=lambda: dict(cb.JOINS))
    # the organisation's base currency, which conditions compare amounts in ("" if none)
    base: str = ""

    @property
    def currency(self) -> str:
        return self.base or DEFAULT_CURRENCY

    @property
    def symbol(self) -> str:
        return SYMBOLS.get(self.currency, self.currency)

    @property
    def whole_amounts(self) -> bool:
        """Does the base currency have no minor unit (yen)? Its amounts are whole."""
        return EXPONENTS.get(self.currency, 2) == 0

    @property
    def currency_name(self) -> str:
        return CURRENCY_NAMES.get(self.currency, self.currency)

    @property
    def base_sentence(self) -> str:
        """What the builder's amounts mean, in one sentence."""
        if not self.base:
            return NO_BASE_WORDS
        return BASE_WORDS.format(name=self.currency_name, code=self.base)


def _schema(definition: Mapping[str, Any]) -> Mapping[str, Any] | None:
    schema = definition.get("schema")
    return schema if isinstance(schema, Mapping) else None


def _places(
    definition: Mapping[str, Any], names: Mapping[str, str] | None = None
) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(prefix, heading, the object holding ``when``) for each step and approver."""
    titles = step_titles(definition)
    out = []
    for index, step in enumerate(definition.get("steps") or []):
        if not isinstance(step, Mapping) or not isinstance(step.get("id"), str):
            continue
        heading = f"Step {index + 1}, {titles.get(step['id'], step['id'])}"
        prefix = f"when-{step['id']}"
        out.append((prefix, heading, step))
        if step.get("kind") != "approval":
            continue
        for j, rule in enumerate(step.get("approvers") or []):
            if isinstance(rule, Mapping):
                who = approver_rule_words(rule, names or {}) or f"approver {j + 1}"
                out.append((f"{prefix}-by-{j}", f"{heading}: asks {who}", rule))
    return out


def _row_views(rows: list[cb.Row], fields: Mapping[str, cb.Field]) -> list[RowView]:
    views = []
    for n, row in enumerate(rows):
        f = fields.get(row.field)
        views.append(
            RowView(n, row.field, row.op, row.value, f.kind if f else "", f.choices if f else ())
        )
    for n in range(len(rows), len(rows) + BLANK_ROWS):
        views.append(RowView(n, "", "", "", ""))
    return views


def builders(
    definition: Mapping[str, Any],
    post: Mapping[str, Any] | None = None,
    errors: Mapping[str, str] | None = None,
    names: Mapping[str, str] | None = None,
    base: str = "",
) -> Builders:
    """The builders for ``definition``; a builder ``post`` carries is shown as posted.
    ``names`` maps usernames to first names, for the approvers' headings; ``base`` is
    the organisation's base currency, which the amounts are in."""
    schema = _schema(definition)
    fields = cb.fields_of(schema, base or DEFAULT_CURRENCY)
    by_name = {f.name: f for f in fields}
    items = []
    for prefix, heading, holder in _places(definition, names):
        builder = Builder(
            prefix, heading, error=(errors or {}).get(prefix, ""), optional="-by-" in prefix
        )
        if post is not None and f"{prefix}-shown" in post:
            if f"{prefix}-expr" in post:
                builder.expression = str(post[f"{prefix}-expr"])
            else:
                builder.join, rows = cb.rows_from_post(post, prefix)
                builder.rows = _row_views(rows, by_name)
            items.append(builder)
            continue
        when = holder.get("when")
        condition = cb.read(
            when if isinstance(when, str) else None, schema, base or DEFAULT_CURRENCY
        )
        if condition is None:
            builder.expression = str(when)
        else:
            builder.join = condition.join
            builder.rows = _row_views(list(condition.rows), by_name)
        items.append(builder)
    field_list = cb.field_list(schema, base or DEFAULT_CURRENCY)
    return Builders(items, fields, cb.known_operators(fields), field_list, base=base)


def apply(
    definition: Mapping[str, Any], post: Mapping[str, Any], base: str = ""
) -> tuple[dict[str, Any], dict[str, str]]:
    """``definition`` with each posted builder's condition written in (amounts typed in
    units of ``base``, the organisation's base currency); the problems by builder
    prefix, each a sentence starting with where it is."""
    out = copy.deepcopy(dict(definition))
    schema = _schema(out)
    errors: dict[str, str] = {}
    for prefix, heading, holder in _places(out):
        if f"{prefix}-shown" not in post:
            continue
        target: Any = holder  # a dict inside ``out`` (deep-copied above)
        if f"{prefix}-expr" in post:
            when = str(post[f"{prefix}-expr"]).strip()
        else:
            join, rows = cb.rows_from_post(post, prefix)
            try:
                when = cb.write(cb.Condition(join, tuple(rows)), schema, base or DEFAULT_CURRENCY)
            except cb.BuilderError as exc:
                errors[prefix] = f"{heading}: {exc}"
                continue
        if when:
            target["when"] = when
        else:
            target.pop("when", None)
    return out, errors
