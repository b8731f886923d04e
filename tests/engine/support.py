"""Small builders shared by the engine tests."""

from __future__ import annotations

from typing import Any

from templates_engine import Definition
from templates_engine.testing import InMemoryEngine


def definition(*steps: dict[str, Any], **top: Any) -> Definition:
    """Parse a definition made of ``steps``; ``top`` adds or overrides top-level fields."""
    return Definition.parse({"key": "test-flow", "steps": list(steps), **top})


def approval(step_id: str, *approvers: dict[str, str], **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "kind": "approval", "approvers": list(approvers), **fields}


def action(step_id: str, activity: str, **fields: Any) -> dict[str, Any]:
    return {"id": step_id, "kind": "action", "activity": activity, **fields}


def drive(engine: InMemoryEngine, workflow_id: str, limit: int = 1_000) -> str:
    """Run the workflow, moving the clock to each wake-up time, until it stops
    needing the clock (terminal, or waiting for a person or a signal)."""
    for _ in range(limit):
        status = engine.run(workflow_id)
        wake = engine.next_run_at(workflow_id)
        if wake is None:
            return status
        engine.clock.advance(max(0.0, wake - engine.clock.now()))
    raise AssertionError(f"{workflow_id} did not settle in {limit} wake-ups")


EXPENSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["amountPaise"],
    "properties": {
        "amountPaise": {"type": "integer", "minimum": 1},
        "purpose": {"type": "string"},
    },
}


def expense_document() -> dict[str, Any]:
    """The demo expense routing: the manager above 1,000 rupees, finance above 10,000,
    a VP above 100,000 (amounts in paise)."""
    return {
        "key": "expense-approval",
        "title": "Expense",
        "schema": EXPENSE_SCHEMA,
        "steps": [
            {
                "id": "manager",
                "kind": "approval",
                "when": "data.amountPaise >= 100000",
                "approvers": [{"manager": "submitter"}],
                "deadline": "P2D",
                "reminders": ["P1D"],
            },
            {
                "id": "finance",
                "kind": "approval",
                "when": "data.amountPaise >= 1000000",
                "approvers": [{"group": "finance"}],
                "send_back_to": "submitter",
            },
            {
                "id": "vp",
                "kind": "approval",
                "when": "data.amountPaise > 10000000",
                "approvers": [{"user": "victor"}],
                "on_reject": "end",
            },
        ],
    }
