"""How the engine's words read to people: amounts, statuses, and one sentence per kind
of history event."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

import pytest
from django.utils import timezone

from approvals.demo import definitions
from approvals.web import present
from approvals.web.diagram import workflow_svg
from approvals.web.forms import SchemaForm
from templates_engine.events import EVENT_TYPES

EXPENSE = next(d for d in definitions() if d["key"] == "expense-approval")
PURCHASE = next(d for d in definitions() if d["key"] == "purchase-request")
DATA = {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"}
NAMES = {"alice": "Alice", "bob": "Bob", "ivan": "Ivan", "fiona": "Fiona", "victor": "Victor"}
CTX = present.Context(raw_definition=EXPENSE, data=DATA, names=NAMES, submitter="alice")
AT = dt.datetime(2026, 12, 2, 8, 45, tzinfo=dt.UTC)


def test_money_is_shown_in_currency_units_through_the_schema_annotation() -> None:
    schema = EXPENSE["schema"]
    assert present.money_fields(schema) == {"amountPaise": "currency"}
    assert present.format_value(schema, DATA, "amountPaise") == "₹45,000.00"
    assert present.format_value(schema, {**DATA, "currency": "USD"}, "amountPaise") == (
        "$45,000.00"
    )
    assert present.key_figures(schema, {**DATA, "amountPaise": 10_000_000_00}) == (
        "₹1,00,00,000.00"
    )
    # the currency is shown within the amount, not on a line of its own
    assert present.data_rows(schema, DATA)[:2] == [
        ("Amount", "₹45,000.00"),
        ("Department", "eng"),
    ]


def test_enum_values_read_as_words_but_codes_stay() -> None:
    data = {"category": "IT_HARDWARE", "currency": "INR"}
    assert present.format_value(PURCHASE["schema"], data, "category") == "IT hardware"
    assert present.format_value(PURCHASE["schema"], data, "currency") == "INR"


def test_conditions_read_with_field_titles_and_amounts() -> None:
    assert (
        present.condition_words("data.amountPaise > 10000000", EXPENSE["schema"], DATA)
        == "amount > ₹1,00,000.00"
    )
    assert (
        present.condition_words("data.category == 'IT_HARDWARE'", PURCHASE["schema"], {})
        == "category is IT hardware"
    )


def test_steps_read_by_title_else_by_their_id_in_words() -> None:
    assert present.step_title(EXPENSE, "vp") == "VP"
    assert present.step_title({"steps": [{"id": "reserve_budget"}]}, "reserve_budget") == (
        "Reserve budget"
    )


@pytest.mark.parametrize(
    ("status", "words"),
    [
        ("APPROVED", "Approved"),
        ("REJECTED", "Rejected"),
        ("CANCELLED", "Cancelled"),
        ("ROLLED_BACK", "Could not be completed"),
        ("COMPENSATION_FAILED", "Could not be completed; being fixed"),
        ("PENDING_FINANCE", "Waiting: Finance"),
        ("PENDING_SUBMITTER", "Sent back for changes"),
    ],
)
def test_status_labels(status: str, words: str) -> None:
    assert present.status_label(status) == words


def test_the_status_sentence_names_who_since_when_and_the_due_day() -> None:
    with timezone.override(dt.timezone(dt.timedelta(hours=5, minutes=30), "IST")):
        text = present.status_sentence(
            status="RUNNING",
            step="Finance",
            assignees=[("fiona", None)],
            submitter="alice",
            since=AT,
            due=AT + dt.timedelta(days=2),
            names=NAMES,
            now=AT + dt.timedelta(hours=1),
        )
    assert text == "Waiting for Fiona (Finance) since 14:15 IST, due 4 Dec"


def test_an_overdue_step_says_so_and_a_send_back_names_the_submitter() -> None:
    text = present.status_sentence(
        status="RUNNING",
        step="Manager",
        assignees=[("alice", None)],
        submitter="alice",
        since=AT,
        due=AT,
        names=NAMES,
        now=AT + dt.timedelta(days=3),
    )
    assert text == "Sent back to Alice for changes since 2 Dec, 08:45 UTC, overdue since 2 Dec"
    assert present.status_sentence(
        status="ROLLED_BACK", step="", assignees=[], submitter=None, since=None, due=None, names={}
    ) == ("Could not be completed")


def _say(event_type: str, by: str | None = None, behalf: str | None = None, **p: Any) -> str:
    return present.sentence(event_type, p, actor=by, on_behalf_of=behalf, ctx=CTX)


SENTENCES = [
    (("WorkflowStarted", "alice"), {"submitter": "alice"}, "Alice submitted the request"),
    (
        ("StepSkipped", "bob"),
        {"step": "vp"},
        "The VP step was skipped: the condition amount > ₹1,00,000.00 did not hold",
    ),
    (
        ("ApproversExcluded", "alice"),
        {"step": "finance", "excluded": [["fiona", "submitter"]], "fallback": False},
        "Fiona was not asked at the Finance step: they submitted this request "
        "(segregation of duties)",
    ),
    (
        ("ApprovalRequested", "alice"),
        {"step": "manager", "assignments": [{"user": "ivan", "on_behalf_of": "bob"}]},
        "The Manager step asked Ivan (for Bob)",
    ),
    (
        ("DecisionRecorded", "bob"),
        {"step": "manager", "actor": "bob", "decision": "approve"},
        "Bob approved the Manager step",
    ),
    (
        ("DecisionRecorded", "ivan", "bob"),
        {"step": "manager", "actor": "ivan", "decision": "approve", "on_behalf_of": "bob"},
        "Ivan approved the Manager step on behalf of Bob",
    ),
    (
        ("TaskReassigned", "bob"),
        {"step": "manager", "from_user": "bob", "to_user": "ivan", "reason": "delegated"},
        "Bob handed the Manager step to Ivan",
    ),
    (
        ("TaskReassigned", "olga"),
        {"step": "manager", "from_user": "ivan", "to_user": "victor", "reason": "handed_on"},
        "Ivan left: the Manager step was handed on to Victor",
    ),
    (
        ("ApproverAdded", "victor"),
        {"step": "manager", "user": "ivan", "actor": "victor", "reason": "Bob left"},
        "Victor added Ivan as an approver on the Manager step: Bob left",
    ),
    (
        ("TimerFired", None),
        {"step": "manager", "key": "manager#1:deadline:0", "kind": "deadline"},
        "The deadline of the Manager step passed",
    ),
    (
        ("TimerFired", None),
        {"step": "manager", "key": "manager#1:reminder:0", "kind": "reminder"},
        "The time to remind about the Manager step came",
    ),
    (
        ("ReminderSent", None),
        {"step": "manager", "users": ["bob"]},
        "Bob was reminded of the Manager step",
    ),
    (
        ("Escalated", None),
        {"step": "manager", "assignments": [{"user": "victor"}], "replace": True},
        "The Manager step was overdue and taken over by Victor",
    ),
    (
        ("SentBack", "bob"),
        {"step": "manager", "to_step": None},
        "The request was sent back to Alice for changes",
    ),
    (
        ("Resubmitted", "alice"),
        {"actor": "alice", "data": {}},
        "Alice changed the request and resubmitted it",
    ),
    (
        ("ActivityScheduled", None),
        {"step": "finance", "activity": "reserve_budget", "attempt": 2},
        "Running reserve budget for the Finance step (attempt 2)",
    ),
    (
        ("ActivityFailed", None),
        {"step": "finance", "attempt": 1, "error": "Timeout", "retry_delay": 2},
        "The Finance step did not work on attempt 1; it will be tried again",
    ),
    (
        ("CompensationStarted", None),
        {"outcome": "REJECTED", "reason": "rejected by fiona on finance"},
        "Undoing the steps already done, as the request was rejected",
    ),
    (
        ("SignalReceived", None),
        {"name": "contract_signed", "step": "finance"},
        "Contract signed was received by the Finance step",
    ),
    (
        ("WorkflowCancelled", "alice"),
        {"actor": "alice", "reason": "no longer needed"},
        "Alice withdrew the request: no longer needed",
    ),
    (
        ("WorkflowCancelled", "victor"),
        {"actor": "victor", "reason": "duplicate"},
        "Victor cancelled the request: duplicate",
    ),
    (("CommentAdded", "bob"), {"actor": "bob", "comment": "Which hotel?"}, "Bob asked"),
    (
        ("CommentAdded", "bob"),
        {"actor": "bob", "comment": "@fiona @victor have a look", "mentions": ["fiona", "victor"]},
        "Bob wrote to Fiona and Victor",
    ),
    (
        ("CommentAdded", "alice"),
        {"actor": "alice", "comment": "@bob is the bill enough?", "mentions": ["bob"]},
        "Alice asked Bob",
    ),
    (
        ("WorkflowRolledBack", None),
        {},
        "The request could not be completed; the steps already done were undone",
    ),
    (
        ("StepRetried", "victor"),
        {"actor": "victor", "reason": "ERP is back", "step": "finance", "from_step": "manager"},
        "Victor ran the request again from the Manager step: ERP is back",
    ),
    (
        ("CompensationRetried", "victor"),
        {"actor": "victor", "reason": "fixed", "step": "finance"},
        "Victor retried undoing the Finance step: fixed",
    ),
    (
        ("CompensationResolved", "victor"),
        {
            "actor": "victor",
            "reason": "done in the ERP",
            "step": "finance",
            "outcome": "ROLLED_BACK",
        },
        "Victor marked the undo of the Finance step as done by hand (the request ends rolled "
        "back): done in the ERP",
    ),
    (
        ("TimerRearmed", "victor"),
        {"actor": "victor", "reason": "db back", "key": "manager#1:deadline:0"},
        "Victor re-armed a timer that had stopped: db back",
    ),
    (
        ("WorkflowRestarted", "victor"),
        {"actor": "victor", "reason": "ERP is back", "step": "finance", "restarted_as": "x"},
        "Victor started the request again as a new request, in place of this one: ERP is back",
    ),
    (
        ("UndoRetried", "victor"),
        {"actor": "victor", "reason": "fixed", "step": "finance"},
        "Victor tried undoing the Finance step again: fixed",
    ),
    (
        ("CompensationSettled", "victor"),
        {
            "actor": "victor",
            "reason": "done in the ERP",
            "step": "finance",
            "outcome": "ROLLED_BACK",
            "by_hand": True,
        },
        "Victor marked the undo of the Finance step as done by hand, settling the roll-back: "
        "done in the ERP",
    ),
    (
        ("CompensationSettled", None),
        {
            "actor": None,
            "reason": "the undo succeeded when retried",
            "step": "finance",
            "outcome": "ROLLED_BACK",
            "by_hand": False,
        },
        "Every undo left succeeded when retried, so the failed roll-back is settled; the "
        "request stays marked as a failed roll-back",
    ),
    (
        ("WorkflowStarted", "alice"),
        {
            "submitter": "alice",
            "origin": {"restarted_from": "x", "made_by": "victor", "reason": "ERP is back"},
        },
        "Victor started this again for Alice, as a new request in place of one that could "
        "not be completed: ERP is back",
    ),
]


@pytest.mark.parametrize(("head", "payload", "text"), SENTENCES, ids=[s[0][0] for s in SENTENCES])
def test_each_event_reads_as_a_sentence(head: tuple[Any, ...], payload: Any, text: str) -> None:
    kind, *who = head
    assert _say(kind, *who, **payload) == text


@pytest.mark.parametrize("kind", sorted(EVENT_TYPES))
def test_no_event_type_falls_back_to_its_class_name(kind: str) -> None:
    text = _say(kind, "bob", step="manager")
    assert text and text != present.humanise(kind)


def test_every_event_class_of_the_engine_has_its_sentence_function() -> None:
    missing = {name for name, cls in EVENT_TYPES.items() if cls not in present.SENTENCES}
    strays = {cls.__name__ for cls in present.SENTENCES if EVENT_TYPES.get(cls.type) is not cls}

    assert not missing, f"no sentence function for {sorted(missing)}"
    assert not strays, f"sentence functions for classes the engine does not know: {strays}"


def test_an_event_type_the_engine_does_not_know_reads_as_its_name_in_words() -> None:
    assert _say("LegacyThingHappened", "bob") == "Legacy thing happened"


def test_the_timeline_gives_the_time_with_its_zone_and_the_comment() -> None:
    entry = SimpleNamespace(
        type="DecisionRecorded",
        actor="bob",
        on_behalf_of=None,
        at=AT,
        comment="OK, within budget",
        payload={"step": "manager", "actor": "bob", "decision": "approve"},
    )
    (line,) = present.timeline([entry], CTX)
    assert (line.text, line.comment, line.at_text) == (
        "Bob approved the Manager step",
        "OK, within budget",
        "2 Dec, 08:45 UTC",
    )
    assert present.usernames_in([entry]) == {"bob"}


def _entry(event_type: str, **payload: Any) -> SimpleNamespace:
    return SimpleNamespace(
        type=event_type, actor=None, on_behalf_of=None, at=AT, comment="", payload=payload
    )


def test_a_timer_reads_as_one_line_when_what_it_did_names_it() -> None:
    reminder = "manager#1:reminder:0"
    wait = "pause#1:wait:0"
    history = [
        _entry("TimerFired", step="manager", key=reminder, kind="reminder"),
        _entry("ReminderSent", step="manager", timer=reminder, users=["bob"]),
        _entry("TimerFired", step="manager", key=wait, kind="wait"),
        _entry("StepCompleted", step="manager"),
    ]

    lines = [line.text for line in present.timeline(history, CTX)]

    assert lines[0] == "Bob was reminded of the Manager step"
    assert lines[1] == "The wait of the Manager step ended"  # said nowhere else
    assert len(lines) == 3


def test_the_diagram_marks_the_position_and_puts_conditions_on_edges() -> None:
    svg = workflow_svg(EXPENSE, data=DATA, current="finance", done={"manager"}, skipped={"vp"})
    assert svg.startswith("<svg") and "<script" not in svg
    assert 'class="node step current" data-step="finance"' in svg
    assert 'class="node step skipped" data-step="vp"' in svg
    assert "if amount &gt; ₹1,00,000.00" in svg


@pytest.mark.parametrize(
    ("typed", "minor"),
    [("45000.00", 4_500_000), ("45,000", 4_500_000), ("0.01", 1), ("1000000000", 100_000_000_000)],
)
def test_money_is_entered_in_currency_units_and_kept_exactly_in_minor_units(
    typed: str, minor: int
) -> None:
    form = SchemaForm(
        EXPENSE["schema"],
        {"amountPaise": typed, "currency": "INR", "department": "eng", "subject_id": "E-1"},
    )
    assert form.is_valid(), form.errors
    assert form.data_for_engine()["amountPaise"] == minor


def test_the_form_uses_titles_descriptions_and_enums() -> None:
    form = SchemaForm(EXPENSE["schema"])
    assert list(form.fields)[:2] == ["amountPaise", "currency"]
    assert form.fields["amountPaise"].label == "Amount"
    assert form.fields["department"].help_text.startswith("The department")
    assert [c[0] for c in form.fields["currency"].choices] == ["INR", "USD", "EUR", "GBP"]
    dated = SchemaForm({"properties": {"on": {"type": "string", "format": "date"}}})
    assert 'type="date"' in str(dated["on"])


def test_what_a_decision_led_to_reads_as_a_phrase() -> None:
    assert present.next_phrase(status="RUNNING", step_title="Finance") == (
        "It now waits for the Finance step."
    )
    assert present.next_phrase(status="COMPLETED", step_title="") == "It is now approved."


def test_a_waiting_badge_uses_the_steps_title() -> None:
    assert present.status_label("PENDING_VP", EXPENSE) == "Waiting: VP"
    assert present.status_label("PENDING_RESERVE_BUDGET") == "Waiting: Reserve budget"


def test_an_early_signal_reads_as_used_when_its_step_began_or_not_yet_used() -> None:
    # given two early contract signals; the Finance step began and used the first
    signed = {"name": "contract_signed"}
    history = [
        _entry("SignalArrivedEarly", **signed, payload={"envelope": "E-1"}),
        _entry("SignalArrivedEarly", **signed, payload={"envelope": "E-2"}),
        _entry("SignalAwaited", step="finance", **signed, timers=[]),
        _entry("SignalReceived", step="finance", **signed, payload={}, early=True),
    ]

    # when
    lines = [line.text for line in present.timeline(history, CTX)]
    finished = present.timeline([*history, _entry("WorkflowCompleted")], CTX)

    # then
    assert lines[0] == "Contract signed arrived early; used when the step began"
    assert lines[1] == "Contract signed arrived early; not used yet"
    assert lines[2] == "The Finance step began and used contract signed, which had arrived early"
    assert len(lines) == 3  # not also "is waiting for": it never waited
    assert finished[1].text == "Contract signed arrived early; it was not used"
