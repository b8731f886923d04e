"""Conditions in the admin's terms: CEL read into rows of field, operator and value in
the field's own units, and written back in minor units; what rows cannot show stays an
expression; bad values are refused in words. Durations as a number and a unit."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from approvals.web import condition_builder as cb
from approvals.web.condition_form import apply, builders
from approvals.web.duration_input import DurationInputError, from_seconds, to_iso
from templates_engine import Definition
from templates_engine.expressions import Condition as CelCondition

from ...properties import examples

EXPENSE = json.loads(
    (Path(__file__).resolve().parents[3] / "approvals/demo/expense-approval.json").read_text()
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amountPaise": {"type": "integer", "title": "Amount", "x-money": {"currency": "currency"}},
        "currency": {"type": "string", "enum": ["INR", "USD"], "title": "Currency"},
        "nights": {"type": "integer", "title": "Nights"},
        "rate": {"type": "number", "title": "Rate"},
        "urgent": {"type": "boolean", "title": "Urgent"},
        "spentOn": {"type": "string", "format": "date", "title": "Spent on"},
        "department": {"type": "string", "title": "Department"},
    },
}


# -- reading and writing -------------------------------------------------------------------


def test_the_vp_threshold_reads_in_rupees_and_writes_back_in_paise() -> None:
    condition = cb.read("data.amountPaise > 10000000", SCHEMA)

    assert condition == cb.Condition("all", (cb.Row("amountPaise", ">", "1,00,000"),))
    lowered = cb.Condition("all", (cb.Row("amountPaise", ">", "₹50,000"),))
    assert cb.write(lowered, SCHEMA) == "data.amountPaise > 5000000"


@pytest.mark.parametrize(
    ("cel", "rows"),
    [
        ("", ()),
        ('data.currency == "USD"', (cb.Row("currency", "==", "USD"),)),
        ("data.urgent == true", (cb.Row("urgent", "==", "yes"),)),
        ("data.spentOn < '2026-04-01'", (cb.Row("spentOn", "<", "2026-04-01"),)),
        ("data.nights >= 3", (cb.Row("nights", ">=", "3"),)),
        ('data.department != "IT && Ops"', (cb.Row("department", "!=", "IT && Ops"),)),
    ],
)
def test_each_kind_of_field_reads_as_a_row(cel: str, rows: tuple[cb.Row, ...]) -> None:
    assert cb.read(cel, SCHEMA) == cb.Condition("all", rows)


def test_any_of_several_rows() -> None:
    cel = 'data.amountPaise >= 100000 || data.currency == "USD"'

    condition = cb.read(cel, SCHEMA)

    assert condition is not None and condition.join == "any"
    assert cb.write(condition, SCHEMA) == cel


@pytest.mark.parametrize(
    "cel",
    [
        "data.amountPaise > 100 && data.nights > 1 || data.urgent == true",  # mixed joins
        "(data.amountPaise > 100)",
        "!(data.urgent)",
        "data.amountPaise * 2 > 100",
        'data.currency in ["INR", "USD"]',
        "data.unknown > 1",
        'data.currency == "JPY"',  # not one of the choices
        "data.amountPaise > 1.5",  # paise are whole
        "submitter == 'alice'",
    ],
)
def test_what_rows_cannot_show_stays_an_expression(cel: str) -> None:
    assert cb.read(cel, SCHEMA) is None


@pytest.mark.parametrize(
    ("row", "words"),
    [
        (cb.Row("amountPaise", ">", "fifty"), "“fifty” is not an amount"),
        (cb.Row("amountPaise", ">", "50,000.505"), "is not an amount"),
        (cb.Row("amountPaise", ">", "9" * 19), "more than any request can carry"),
        (cb.Row("amountPaise", ">", ""), "Enter the value Amount is compared with"),
        (cb.Row("currency", ">", "INR"), "Choose how Currency compares"),
        (cb.Row("currency", "==", "JPY"), "Currency: choose one of"),
        (cb.Row("spentOn", "<", "31/12/2026"), "is not a date"),
        (cb.Row("spentOn", "<", "2026-02-30"), "is not a date"),
        (cb.Row("urgent", "==", "maybe"), "choose yes or no"),
        (cb.Row("nights", ">", "2.5"), "is not a whole number"),
        (cb.Row("department", "==", "two\nlines"), "on one line"),
        (cb.Row("nowhere", "==", "x"), "Choose a field"),
    ],
)
def test_bad_rows_are_refused_in_words(row: cb.Row, words: str) -> None:
    with pytest.raises(cb.BuilderError, match=words):
        cb.write(cb.Condition("all", (row,)), SCHEMA)


# -- the round trip, over generated conditions -----------------------------------------------

_FIELDS = {f.name: f for f in cb.fields_of(SCHEMA)}
_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029"),
    max_size=20,
)


def _value(field: cb.Field) -> st.SearchStrategy[str]:
    if field.kind == "money":
        return st.integers(-(10**12), 10**12).map(cb.money_text)
    if field.kind == "whole":
        return st.integers(-(10**9), 10**9).map(str)
    if field.kind == "number":
        return st.decimals(-(10**6), 10**6, places=3, allow_nan=False).map(str)
    if field.kind == "yesno":
        return st.sampled_from(["yes", "no"])
    if field.kind == "choice":
        return st.sampled_from(field.choices)
    if field.kind == "date":
        return st.dates(dt.date(1970, 1, 1), dt.date(2200, 12, 31)).map(dt.date.isoformat)
    return _TEXT


@st.composite
def rows(draw: st.DrawFn) -> cb.Row:
    field = draw(st.sampled_from(list(_FIELDS.values())))
    op = draw(st.sampled_from(list(field.operators)))
    return cb.Row(field.name, op, draw(_value(field)))


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(["all", "any"]), st.lists(rows(), min_size=1, max_size=4))
@example("all", [cb.Row("department", "==", " ")])  # once read back as ""
@example("any", [cb.Row("department", "!=", " eng "), cb.Row("department", "==", "\u00a0")])
def test_rows_written_as_cel_read_back_the_same(join: str, drawn: list[cb.Row]) -> None:
    condition = cb.Condition(join, tuple(drawn))

    cel = cb.write(condition, SCHEMA)

    CelCondition(cel, "$.when")  # the engine compiles what the builder writes
    back = cb.read(cel, SCHEMA)
    assert back is not None
    assert back.rows == condition.rows
    assert cb.write(back, SCHEMA) == cel


# -- the builders on the page ---------------------------------------------------------------


def test_the_page_posts_a_lowered_threshold_into_the_definition() -> None:
    post = {
        "when-vp-shown": "1",
        "when-vp-join": "all",
        "when-vp-0-field": "amountPaise",
        "when-vp-0-op": ">",
        "when-vp-0-value": "50,000",
        "when-vp-1-field": "",
    }

    edited, errors = apply(EXPENSE, post)

    assert errors == {}
    assert edited["steps"][1]["when"] == "data.amountPaise > 5000000"
    assert edited["steps"][0]["when"] == EXPENSE["steps"][0]["when"]  # not posted: kept
    Definition.parse(edited)


def test_emptying_every_row_means_always_and_a_bad_amount_names_the_step() -> None:
    edited, errors = apply(EXPENSE, {"when-vp-shown": "1", "when-vp-0-field": ""})
    assert "when" not in edited["steps"][1]

    post = {"when-vp-shown": "1", "when-vp-0-field": "amountPaise", "when-vp-0-op": ">"}
    _, errors = apply(EXPENSE, {**post, "when-vp-0-value": "lots"})
    assert errors == {
        "when-vp": "Step 2, VP: Amount: “lots” is not an amount; enter one "
        "such as 50,000 or 50,000.50."
    }


def test_an_approver_condition_has_its_own_builder() -> None:
    definition = json.loads(json.dumps(EXPENSE))
    definition["steps"][1]["approvers"].append({"user": "cora", "when": "data.amountPaise > 1"})

    shown = builders(definition, names={"cora": "Cora"})

    by = {b.prefix: b for b in shown.items}
    assert by["when-vp-by-1"].heading == "Step 2, VP: asks Cora"
    assert by["when-vp-by-1"].rows[0].value == "0.01"
    assert by["when-vp"].rows[0].value == "1,00,000"


# -- durations ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "unit", "iso"),
    [("3", "days", "P3D"), (2, "hours", "PT2H"), ("90", "minutes", "PT90M"), ("", "days", None)],
)
def test_a_number_and_a_unit_make_a_duration(number: Any, unit: str, iso: str | None) -> None:
    assert to_iso(number, unit) == iso


@pytest.mark.parametrize(
    ("number", "unit", "words"),
    [
        ("-2", "days", "The deadline must be a positive number of days, hours or minutes."),
        ("0", "days", "must be a positive number"),
        ("two", "days", "must be a positive number"),
        ("1.5", "days", "must be a positive number"),
        (True, "days", "must be a positive number"),
        ("3651", "days", "at most 3,650 days"),
        ("999999999", "minutes", "at most 3,650 days"),
        ("3", "fortnights", "choose days, hours or minutes"),
    ],
)
def test_bad_durations_are_refused_in_words(number: Any, unit: str, words: str) -> None:
    with pytest.raises(DurationInputError, match=words):
        to_iso(number, unit, what="The deadline")


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(172800, (2, "days")), (7200, (2, "hours")), (5400, (90, "minutes")), (30, (30, "seconds"))],
)
def test_a_kept_duration_shows_in_its_largest_exact_unit(
    seconds: float, shown: tuple[int, str]
) -> None:
    assert from_seconds(seconds) == shown
