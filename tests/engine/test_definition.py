"""Definition.parse: every bad document names the JSON path of its first problem."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from templates_engine import Definition, DefinitionError
from templates_engine.steps import ActionStep, ApprovalStep, SignalStep, WaitStep

BOSS = {"manager": "submitter"}


def _doc(*steps: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"key": "expense-approval", "steps": list(steps), **top}


def _approval(step_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "kind": "approval", "approvers": [BOSS], **fields}


def _action(step_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "kind": "action", "activity": f"do_{step_id}", **fields}


BAD_DOCUMENTS = [
    pytest.param(_doc({"id": "a", "kind": "telepathy"}), "$.steps[0].kind", id="unknown-step-kind"),
    pytest.param(_doc({"id": "a"}), "$.steps[0].kind", id="missing-step-kind"),
    pytest.param(_doc(_approval("a"), _approval("a")), "$.steps[1].id", id="duplicate-step-id"),
    pytest.param(_doc(_approval("submitter")), "$.steps[0].id", id="reserved-id-submitter"),
    pytest.param(_doc(_approval("Bad-Id")), "$.steps[0].id", id="step-id-not-snake-case"),
    pytest.param(
        _doc(_approval("a"), _approval("b", when="data.amount >=")),
        "$.steps[1].when",
        id="when-does-not-compile",
    ),
    pytest.param(_doc(_approval("a", when="   ")), "$.steps[0].when", id="when-blank"),
    pytest.param(
        _doc(_action("a", retry={"max_attempts": 0})),
        "$.steps[0].retry.max_attempts",
        id="max-attempts-below-one",
    ),
    pytest.param(
        _doc(_action("a", retry={"max_attempts": True})),
        "$.steps[0].retry.max_attempts",
        id="max-attempts-bool",
    ),
    pytest.param(
        _doc(_action("a", compensate={"activity": "undo", "retry": {"max_attempts": -1}})),
        "$.steps[0].compensate.retry.max_attempts",
        id="compensation-max-attempts-below-one",
    ),
    pytest.param(
        _doc(_action("a", retry={"backoff_coefficient": 0.5})),
        "$.steps[0].retry.backoff_coefficient",
        id="backoff-coefficient-below-one",
    ),
    pytest.param(
        _doc(_action("a", retry={"initial_interval": 10, "max_interval": 5})),
        "$.steps[0].retry.max_interval",
        id="max-interval-below-initial",
    ),
    pytest.param(
        _doc(_action("a", retry={"tries": 3})), "$.steps[0].retry.tries", id="unknown-retry-field"
    ),
    pytest.param(
        _doc(_approval("a", on_reject="nowhere")),
        "$.steps[0].on_reject",
        id="on-reject-to-missing-step",
    ),
    pytest.param(
        _doc(_approval("a", send_back_to="b"), _approval("b")),
        "$.steps[0].send_back_to",
        id="send-back-to-later-step",
    ),
    pytest.param(
        _doc(_approval("a"), _approval("b", on_reject="b")),
        "$.steps[1].on_reject",
        id="on-reject-to-itself",
    ),
    pytest.param(
        _doc(_action("a"), _approval("b", send_back_to="a")),
        "$.steps[1].send_back_to",
        id="send-back-to-an-action-step",
    ),
    pytest.param(
        _doc(_approval("a", send_back_to="end")),
        "$.steps[0].send_back_to",
        id="send-back-to-end",
    ),
    pytest.param(
        _doc({"id": "w", "kind": "wait", "duration": -5}),
        "$.steps[0].duration",
        id="negative-duration",
    ),
    pytest.param(
        _doc({"id": "w", "kind": "wait", "duration": "-PT5S"}),
        "$.steps[0].duration",
        id="negative-iso-duration",
    ),
    pytest.param(
        _doc(_approval("a", deadline="P1M")), "$.steps[0].deadline", id="iso-duration-with-months"
    ),
    pytest.param(
        _doc(_approval("a", reminders=["PT1H", "P1Y"])),
        "$.steps[0].reminders[1]",
        id="iso-duration-with-years",
    ),
    pytest.param(
        _doc(_approval("a", deadline="two days")), "$.steps[0].deadline", id="not-a-duration"
    ),
    pytest.param(
        _doc({"id": "w", "kind": "wait", "duration": True}),
        "$.steps[0].duration",
        id="bool-duration",
    ),
    pytest.param(_doc({"id": "w", "kind": "wait"}), "$.steps[0].duration", id="missing-duration"),
    pytest.param(_doc(_action("a", timeout=0)), "$.steps[0].timeout", id="zero-activity-timeout"),
    pytest.param(_doc(_approval("a", colour="red")), "$.steps[0].colour", id="unknown-step-field"),
    pytest.param(_doc(_approval("a"), owner="me"), "$.owner", id="unknown-top-level-field"),
    pytest.param(
        _doc(_action("a", compensate={"activity": "undo", "after": 1})),
        "$.steps[0].compensate.after",
        id="unknown-compensation-field",
    ),
    pytest.param(
        _doc(_approval("a"), schema={"type": "thing"}), "$.schema", id="invalid-json-schema"
    ),
    pytest.param(_doc(_approval("a"), schema=[1]), "$.schema", id="schema-not-an-object"),
    pytest.param(_doc(), "$.steps", id="empty-steps"),
    pytest.param({"key": "k"}, "$.steps", id="missing-steps"),
    pytest.param(_doc(_approval("a"), key="Expense Approval"), "$.key", id="bad-key"),
    pytest.param(_doc(_approval("a"), key=""), "$.key", id="empty-key"),
    pytest.param({"steps": [_approval("a")]}, "$.key", id="missing-key"),
    pytest.param(_doc(_approval("a"), version=0), "$.version", id="version-zero"),
    pytest.param(["not", "an", "object"], "$", id="document-not-an-object"),
    pytest.param(_doc("approve it"), "$.steps[0]", id="step-not-an-object"),
    pytest.param(_doc(_approval("a", approvers=[])), "$.steps[0].approvers", id="no-approvers"),
    pytest.param(
        _doc(_approval("a", approvers=[{"role": "cfo"}])),
        "$.steps[0].approvers[0]",
        id="unknown-approver-rule",
    ),
    pytest.param(
        _doc(_approval("a", approvers=[{"manager": "assignee"}])),
        "$.steps[0].approvers[0].manager",
        id="manager-of-assignee-outside-escalation",
    ),
    pytest.param(_doc(_approval("a", mode="most")), "$.steps[0].mode", id="unknown-mode"),
    pytest.param(
        _doc(_approval("a", mode="quorum", quorum=0)), "$.steps[0].quorum", id="quorum-zero"
    ),
    pytest.param(
        _doc({"id": "s", "kind": "signal"}), "$.steps[0].signal", id="signal-without-name"
    ),
    pytest.param(_doc({"id": "a", "kind": "action"}), "$.steps[0].activity", id="no-activity"),
    pytest.param(
        _doc(_approval("a"), _approval("b", fallback={"user": "zoe"})),
        "$.steps[1].fallback",
        id="fallback-not-a-list",
    ),
    pytest.param(_doc(_approval("a", fallback=[])), "$.steps[0].fallback", id="fallback-empty"),
    pytest.param(
        _doc(_approval("a", fallback=[BOSS, {"role": "cfo"}])),
        "$.steps[0].fallback[1]",
        id="fallback-unknown-rule",
    ),
    pytest.param(
        _doc(_approval("a", fallback=[{"manager": "assignee"}])),
        "$.steps[0].fallback[0].manager",
        id="fallback-manager-of-assignee",
    ),
    pytest.param(
        _doc(_action("a", fallback=[BOSS])), "$.steps[0].fallback", id="fallback-on-an-action"
    ),
    pytest.param(
        _doc(_approval("a"), distinct_approvers="yes"),
        "$.distinct_approvers",
        id="distinct-approvers-a-string",
    ),
    pytest.param(
        _doc(_approval("a"), distinct_approvers=1),
        "$.distinct_approvers",
        id="distinct-approvers-a-number",
    ),
]


@pytest.mark.parametrize(("doc", "path"), BAD_DOCUMENTS)
def test_a_bad_document_names_the_path_of_its_problem(doc: object, path: str) -> None:
    # when
    with pytest.raises(DefinitionError) as caught:
        Definition.parse(doc)

    # then
    assert caught.value.path == path
    assert caught.value.problem
    assert str(caught.value).startswith(f"{path}: ")


def test_a_reference_to_a_missing_step_says_it_does_not_exist() -> None:
    with pytest.raises(DefinitionError) as caught:
        Definition.parse(_doc(_approval("a", send_back_to="ghost")))

    assert "does not exist" in caught.value.problem


def test_a_good_document_parses_durations_and_numbers() -> None:
    # given
    doc = _doc(
        _approval("manager", when="data.amountPaise >= 100000", deadline="P2D", reminders=[3600]),
        _action(
            "reserve",
            queue="payments",
            timeout="PT30S",
            retry={"initial_interval": "PT2S", "backoff_coefficient": 3, "max_attempts": 5},
            compensate="release",
        ),
        {"id": "cool_off", "kind": "wait", "duration": 90.5},
        {"id": "erp", "kind": "signal", "signal": "erp-booked", "timeout": "PT1H"},
        title="Expense",
        version=4,
    )

    # when
    definition = Definition.parse(doc)

    # then
    manager, reserve, cool_off, erp = definition.steps
    assert isinstance(manager, ApprovalStep)
    assert manager.deadline == 2 * 86_400
    assert manager.reminders == (3_600.0,)
    assert manager.when is not None and manager.when.source == "data.amountPaise >= 100000"
    assert isinstance(reserve, ActionStep)
    assert reserve.run.timeout == 30.0
    assert reserve.run.queue == "payments"
    assert reserve.run.retry.initial_interval == 2.0
    assert reserve.run.retry.backoff_coefficient == 3.0
    assert reserve.run.retry.max_attempts == 5
    assert reserve.compensate is not None
    assert reserve.compensate.activity == "release"
    assert reserve.compensate.queue == "payments"  # an undo runs where its step ran
    assert isinstance(cool_off, WaitStep) and cool_off.duration == 90.5
    assert isinstance(erp, SignalStep) and erp.timeout == 3_600.0
    assert (definition.key, definition.title, definition.version) == (
        "expense-approval",
        "Expense",
        4,
    )
    assert definition.index("cool_off") == 2
    assert definition.step("erp") is erp


def test_parse_does_not_change_the_document() -> None:
    doc = _doc(_action("a", compensate="undo"), _approval("b", on_reject="end"))
    before = copy.deepcopy(doc)

    Definition.parse(doc)

    assert doc == before


def test_a_version_argument_overrides_the_document() -> None:
    definition = Definition.parse(_doc(_approval("a"), version=2), version=7)

    assert definition.version == 7


def test_references_to_earlier_approval_steps_are_accepted() -> None:
    definition = Definition.parse(
        _doc(_approval("a"), _approval("b", on_reject="a", send_back_to="a"))
    )

    step = definition.step("b")
    assert isinstance(step, ApprovalStep)
    assert (step.on_reject, step.send_back_to) == ("a", "a")


def test_activities_lists_every_activity_and_undo() -> None:
    definition = Definition.parse(
        _doc(
            _approval("a"),
            _action("reserve", compensate={"activity": "release", "queue": "slow"}),
            _action("notify"),
            _action("book", compensate="unbook"),
        )
    )

    assert definition.activities() == {"do_reserve", "release", "do_notify", "do_book", "unbook"}


def test_data_errors_reports_schema_violations_by_path() -> None:
    # given
    schema = {
        "type": "object",
        "required": ["amountPaise"],
        "properties": {
            "amountPaise": {"type": "integer", "minimum": 1},
            "note": {"type": "string"},
        },
    }
    definition = Definition.parse(_doc(_approval("a"), schema=schema))

    # when
    errors = definition.data_errors({"amountPaise": -5, "note": 3})

    # then
    assert len(errors) == 2
    assert errors[0].startswith("$.amountPaise: ")
    assert errors[1].startswith("$.note: ")
    assert definition.data_errors({}) == ["$: 'amountPaise' is a required property"]
    assert definition.data_errors({"amountPaise": 10}) == []
    assert definition.data_errors([1, 2]) == ["$: workflow data must be a JSON object"]


def test_without_a_schema_any_object_is_valid_data() -> None:
    definition = Definition.parse(_doc(_approval("a")))

    assert definition.data_errors({"anything": [1, {"x": None}]}) == []
    assert definition.data_errors("text") != []


def test_fallback_and_distinct_approvers_are_read() -> None:
    # when
    plain = Definition.parse(_doc(_approval("a")))
    strict = Definition.parse(
        _doc(
            _approval("a", fallback=[{"group": "finance"}, {"user": "zoe"}]),
            distinct_approvers=True,
        )
    )

    # then
    step = strict.steps[0]
    assert isinstance(step, ApprovalStep)
    assert [r.to_dict() for r in step.fallback] == [{"group": "finance"}, {"user": "zoe"}]
    assert strict.distinct_approvers is True
    assert plain.distinct_approvers is False
    assert isinstance(plain.steps[0], ApprovalStep) and plain.steps[0].fallback == ()


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        pytest.param(_doc(_approval("a"), key="expense\n"), "$.key", id="key"),
        pytest.param(_doc(_approval("a\n")), "$.steps[0].id", id="step-id"),
    ],
)
def test_a_key_or_step_id_with_a_trailing_newline_is_refused(doc: object, path: str) -> None:
    with pytest.raises(DefinitionError) as caught:
        Definition.parse(doc)

    assert caught.value.path == path


def test_a_step_may_say_in_its_own_words_why_it_failed() -> None:
    step = {"id": "reserve", "kind": "action", "activity": "reserve_budget"}
    ok = {"key": "k", "steps": [{**step, "failure_text": "The budget has no room for this"}]}
    assert Definition.parse(ok).steps[0].id == "reserve"

    for bad in ("", "   ", 42):
        doc = {"key": "k", "steps": [{**step, "failure_text": bad}]}
        with pytest.raises(DefinitionError) as caught:
            Definition.parse(doc)
        assert caught.value.path == "$.steps[0].failure_text"
