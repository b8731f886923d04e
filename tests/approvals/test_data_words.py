"""approvals.words.data: a summary line reads each field as people read it, and falls
back to the workflow template's title and the reference."""

from __future__ import annotations

from typing import Any

from approvals.words.data import ELLIPSIS, SUMMARY_MAX, amount_line, summary_line

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amountPaise": {"type": "integer", "x-money": {"currency": "currency"}},
        "currency": {"type": "string"},
        "category": {"type": "string", "enum": ["IT_HARDWARE", "SOFTWARE"]},
        "needed": {"type": "string", "format": "date"},
        "item": {"type": "string"},
    },
}


def _line(summary: str | None, data: dict[str, Any]) -> str:
    return summary_line(
        title="Purchase request", summary=summary, schema=SCHEMA, subject_id="PR-7", data=data
    )


def test_each_field_reads_as_its_schema_declares_it() -> None:
    data = {
        "amountPaise": 1_00_00_000_00,
        "currency": "INR",
        "category": "IT_HARDWARE",
        "needed": "2026-12-24",
        "item": "Laptop",
    }

    line = _line("{item} ({category}) by {needed}: {amountPaise}", data)

    assert line == "Laptop (IT hardware) by 24 Dec 2026: ₹1,00,00,000.00"


def test_missing_fields_read_as_nothing_and_take_their_separators_along() -> None:
    assert _line("{item}, {amountPaise}", {"amountPaise": 4_500_000}) == "₹45,000.00"
    assert _line("{item}, {amountPaise}", {"item": "Chair"}) == "Chair"


def test_without_a_summary_or_with_an_empty_one_the_line_is_title_and_reference() -> None:
    assert _line(None, {"item": "Chair"}) == "Purchase request PR-7"
    assert _line("{item}", {}) == "Purchase request PR-7"


def test_a_long_or_broken_value_reads_as_one_short_line() -> None:
    line = _line("{item}", {"item": "Desk\nwith drawers " + "x" * 400})

    assert "\n" not in line
    assert line.startswith("Desk with drawers ")
    assert len(line) == SUMMARY_MAX and line.endswith(ELLIPSIS)


def test_the_amount_is_the_first_money_field_the_data_holds() -> None:
    assert amount_line(SCHEMA, {"amountPaise": 123_456, "currency": "USD"}) == "$1,234.56"
    assert amount_line(SCHEMA, {"item": "Chair"}) == ""
    assert amount_line(None, {"amountPaise": 100}) == ""
