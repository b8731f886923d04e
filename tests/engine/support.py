"""Small builders shared by the engine tests."""

from __future__ import annotations

import json
from pathlib import Path
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


# The demo organisation's expense routing, read as plain JSON (no Django needed).
EXPENSE_JSON = Path(__file__).parents[2] / "approvals" / "demo" / "expense-approval.json"


def expense_document() -> dict[str, Any]:
    """The demo expense routing: the manager from 1,000 rupees, a VP above 100,000, then
    finance (amounts in paise)."""
    doc: dict[str, Any] = json.loads(EXPENSE_JSON.read_text())
    return doc


def expense(amount_paise: int, **more: Any) -> dict[str, Any]:
    """Workflow data for the demo expense definition."""
    return {"amountPaise": amount_paise, "currency": "INR", "department": "sales", **more}
