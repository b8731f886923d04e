"""The structured editor's document and the definition format convert both ways
without loss: saving the editor untouched publishes nothing new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from approvals.web.definition_editor import (
    JOIN,
    EditorShapeError,
    complete,
    duration_from_editor,
    duration_to_editor,
    editor_schema,
    error_key,
    from_editor,
    to_editor,
)

DEMO = sorted((Path(__file__).resolve().parents[3] / "approvals" / "demo").glob("*.json"))
SCHEMA = editor_schema(groups=["finance", "it-admins"], users=["victor", "cora"])


def _as_posted(definition: dict[str, Any]) -> Any:
    """What the editor posts back for ``definition`` untouched (through JSON, as sent)."""
    return json.loads(json.dumps(complete(to_editor(definition), SCHEMA)))


@pytest.mark.parametrize("path", DEMO, ids=[p.stem for p in DEMO])
def test_an_untouched_editor_gives_back_the_same_definition(path: Path) -> None:
    definition = json.loads(path.read_text())

    assert from_editor(_as_posted(definition), definition) == definition


def test_an_edited_deadline_and_a_new_reminder() -> None:
    definition = json.loads(DEMO[0].read_text())
    doc = _as_posted(definition)
    doc["steps"][0]["deadline"] = {"number": 36, "unit": "hours"}
    doc["steps"][0]["reminders"].append({"number": 30, "unit": "minutes"})

    step = from_editor(doc, definition)["steps"][0]

    assert step["deadline"] == "PT36H"
    assert step["reminders"] == ["P1D", "PT30M"]


@pytest.mark.parametrize(
    ("value", "editor", "back"),
    [
        ("P2D", {"number": 2, "unit": "days"}, "P2D"),
        ("PT90M", {"number": 90, "unit": "minutes"}, "PT90M"),
        ("P1DT12H", {"number": 36, "unit": "hours"}, "PT36H"),
        (3630, {"number": 3630, "unit": "seconds"}, "PT3630S"),
    ],
    ids=["days", "minutes", "hours", "seconds"],
)
def test_durations_as_a_number_and_a_unit(value: Any, editor: dict[str, int], back: str) -> None:
    assert duration_to_editor(value) == editor
    assert duration_from_editor(editor) == back


def test_a_money_field_keeps_its_currency_and_limits() -> None:
    definition = json.loads(DEMO[0].read_text())
    doc = _as_posted(definition)
    amount = next(f for f in doc["fields"] if f["name"] == "amountPaise")
    assert (amount["type"], amount["currency_field"]) == ("money", "currency")
    amount["maximum"] = 500

    prop = from_editor(doc, definition)["schema"]["properties"]["amountPaise"]

    assert prop["x-money"] == {"currency": "currency"}
    assert (prop["type"], prop["minimum"], prop["maximum"]) == ("integer", 1, 50_000)  # ₹500


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("$.steps[2].approvers[0].group", JOIN.join(["steps", "2", "approvers", "0", "group"])),
        ("$.steps[1].when", JOIN.join(["steps", "1", "when"])),
        ("$.steps[2].compensate.activity", JOIN.join(["steps", "2", "compensate"])),
        ("$.schema.properties.currency.enum", JOIN.join(["fields", "1"])),
    ],
    ids=["approver", "condition", "compensation", "data-field"],
)
def test_errors_land_on_the_editor_field(path: str, key: str) -> None:
    doc = {"fields": [{"name": "amountPaise"}, {"name": "currency"}]}

    assert error_key(path, doc) == key


def test_a_money_field_s_limits_are_typed_in_rupees_and_kept_in_paise() -> None:
    definition = json.loads(DEMO[0].read_text())
    doc = _as_posted(definition)
    amount = next(f for f in doc["fields"] if f["name"] == "amountPaise")
    assert (amount["minimum"], amount["maximum"]) == (0.01, 1_000_000_000)

    amount["maximum"] = 50_000.5
    prop = from_editor(doc, definition)["schema"]["properties"]["amountPaise"]

    assert (prop["minimum"], prop["maximum"]) == (1, 5_000_050)


@pytest.mark.parametrize("limit", [0.001, 10.0**20])
def test_a_money_limit_finer_than_a_paisa_or_too_large_is_refused_in_words(limit: float) -> None:
    definition = json.loads(DEMO[0].read_text())
    doc = _as_posted(definition)
    next(f for f in doc["fields"] if f["name"] == "amountPaise")["maximum"] = limit

    with pytest.raises(EditorShapeError, match="Amount: the lowest and highest amounts are in"):
        from_editor(doc, definition)
