"""Approvers chosen by a condition, in people's words: the diagram says "Victor too,
above ₹1,00,000.00" and the history says who was asked and why."""

from __future__ import annotations

import re
from typing import Any

from approvals.web import present
from approvals.web.diagram import BOX_H, SUB_LINE, workflow_svg

SCHEMA = {
    "type": "object",
    "properties": {
        "amountPaise": {"type": "integer", "title": "Amount", "x-money": {"currency": "currency"}},
        "currency": {"type": "string", "enum": ["INR", "USD"]},
        "department": {"type": "string", "title": "Department", "enum": ["eng", "legal"]},
    },
}
NAMES = {"victor": "Victor", "cora": "Cora", "bob": "Bob"}
DATA = {"amountPaise": 20_000_000, "currency": "INR", "department": "eng"}


def _definition(*approvers: dict[str, str], mode: str = "all") -> dict[str, Any]:
    step = {"id": "sign", "title": "Signing", "kind": "approval", "approvers": list(approvers)}
    return {"key": "k", "title": "Signing", "schema": SCHEMA, "steps": [{**step, "mode": mode}]}


def _sub_lines(svg: str) -> list[str]:
    return re.findall(r'class="sub">([^<]*)<', svg)


def test_the_diagram_puts_a_rule_chosen_approver_on_a_line_of_their_own_in_rupees() -> None:
    raw = _definition(
        {"manager": "submitter"},
        {"group": "finance"},
        {"user": "victor", "when": "data.amountPaise > 10000000"},
        {"user": "cora", "when": "data.amountPaise >= 50000000"},
    )

    svg = workflow_svg(raw, data={}, names=NAMES)

    assert _sub_lines(svg) == [
        "the manager and the Finance group",
        "Victor too, above ₹1,00,000.00",
        "Cora too, from ₹5,00,000.00",
    ]
    # the box grows by a line for each, and its tooltip carries them too
    assert f'height="{BOX_H + 2 * SUB_LINE}" rx="6"' in svg
    assert "Signing: always; Victor too, above ₹1,00,000.00; Cora too" in svg


def test_a_condition_on_other_data_reads_as_words_and_an_only_conditional_set_has_no_too() -> None:
    raw = _definition({"user": "cora", "when": "data.department == 'legal'"}, mode="any")

    svg = workflow_svg(raw, data={}, names=NAMES)

    assert _sub_lines(svg) == ["Cora, if department is legal"]


def test_without_names_the_diagram_still_reads_the_rule() -> None:
    raw = _definition({"user": "victor", "when": "data.amountPaise < 100"}, {"group": "finance"})

    assert _sub_lines(workflow_svg(raw, data={})) == [
        "the Finance group",
        "victor too, below ₹1.00",
    ]


def test_the_history_says_a_rule_chosen_approver_was_asked_because_of_the_condition() -> None:
    raw = _definition(
        {"manager": "submitter"}, {"user": "victor", "when": "data.amountPaise > 10000000"}
    )
    ctx = present.Context(raw_definition=raw, data=DATA, names=NAMES, submitter="alice")
    payload = {
        "step": "sign",
        "assignments": [
            {"user": "bob", "slot": 0, "on_behalf_of": None},
            {"user": "victor", "slot": 1, "on_behalf_of": None},
        ],
        "required": 2,
        "mode": "all",
    }

    text = present.sentence("ApprovalRequested", payload, actor=None, on_behalf_of=None, ctx=ctx)

    assert text == (
        "The Signing step asked all of Bob and Victor (as the amount is above ₹1,00,000.00)"
    )


def test_a_delegate_standing_in_for_a_rule_chosen_approver_is_named_with_both_reasons() -> None:
    raw = _definition({"user": "victor", "when": "data.department == 'eng'"})
    ctx = present.Context(raw_definition=raw, data=DATA, names=NAMES, submitter="alice")
    payload = {
        "step": "sign",
        "assignments": [{"user": "cora", "slot": 0, "on_behalf_of": "victor"}],
        "required": 1,
        "mode": "all",
    }

    text = present.sentence("ApprovalRequested", payload, actor=None, on_behalf_of=None, ctx=ctx)

    assert text == "The Signing step asked Cora (for Victor) (as department is eng)"
