"""Every path through the demo workflow templates, run in memory (no database): at each
approval step reached, each decision offered (approve, reject, send back), a
resubmission or a withdrawal after a send-back, a cancel by an organisation admin once
a step with an undo was done, and a budget check that fails. Each path keeps its
events and the decisions it made, for the tests of the words people read."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from templates_engine import Definition, StaticDirectory
from templates_engine import events as ev
from templates_engine.testing import FakeClock, InMemoryEngine

DEMO = Path(__file__).parents[2] / "approvals" / "demo"
HISTORIES = Path(__file__).parents[1] / "engine" / "histories"

# The demo organisation's people (approvals.demo.PEOPLE), read without Django.
MANAGERS = {"victor": "cora", "bob": "victor", "alice": "bob", "fiona": "victor"}
MANAGERS |= {"farah": "victor", "ivan": "victor", "audrey": "victor", "olga": "victor"}
GROUPS = {"finance": ("fiona", "farah"), "it-admins": ("ivan",)}
NAMES = {u: u.capitalize() for u in (*MANAGERS, "cora")}
SUBMITTER = "alice"

# Data that takes each template down each of its routes; the last one of purchases
# is more than the budget check allows.
DATA = {
    "expense-approval": [
        {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        {"amountPaise": 20_000_000, "currency": "INR", "department": "eng"},
    ],
    "purchase-request": [
        {"amountPaise": 9_000_000, "currency": "INR", "category": "IT_HARDWARE", "item": "Kit"},
        {"amountPaise": 9_000_000, "currency": "INR", "category": "SOFTWARE", "item": "IDE"},
        {"amountPaise": 1_500_000_000, "currency": "INR", "category": "SOFTWARE", "item": "X"},
    ],
}


def _activities() -> dict[str, Any]:
    from approvals.activities import builtin

    return {
        "reserve_budget": builtin.reserve_budget,
        "release_budget": builtin.release_budget,
        "order_hardware": builtin.order_hardware,
        "cancel_hardware_order": builtin.cancel_hardware_order,
        "notify_erp": builtin.notify_erp,
    }


@dataclass
class Path_:
    """One path: the template's definition as stored, its events, and each decision
    made as (step, decision, index of the DecisionRecorded event)."""

    name: str
    raw: Mapping[str, Any]
    events: list[ev.Event]
    decisions: list[tuple[str, str, int]] = field(default_factory=list)


def demo_definitions() -> dict[str, dict[str, Any]]:
    return {
        doc["key"]: doc for doc in (json.loads(p.read_text()) for p in sorted(DEMO.glob("*.json")))
    }


class _Walk:
    def __init__(self, raw: Mapping[str, Any], data: Mapping[str, Any]) -> None:
        self.raw, self.data = raw, data
        self.definition = Definition.parse(dict(raw))

    def fresh(self) -> tuple[InMemoryEngine, list[tuple[str, str]]]:
        engine = InMemoryEngine(
            self.definition,
            _activities(),
            FakeClock(1_764_000_000.0),
            random.Random(3),
            StaticDirectory(managers=MANAGERS, groups=GROUPS),
        )
        engine.start("wf", self.data, submitter=SUBMITTER)
        engine.run("wf")
        return engine, []

    def replay(self, moves: list[tuple[str, str]]) -> InMemoryEngine:
        """A new run of ``moves``: (who, decision), or ("olga", "cancel")."""
        engine, _ = self.fresh()
        for n, (who, decision) in enumerate(moves):
            if decision == "cancel":
                engine.cancel("wf", who, "No longer needed")
            else:
                engine.decide("wf", who, decision, f"r{n}", comment="Because")
            engine.run("wf")
        return engine


def _deciders(engine: InMemoryEngine) -> list[str]:
    return [a.user for a in engine.state("wf").outstanding()]


def _path(name: str, walk: _Walk, moves: list[tuple[str, str]]) -> Path_:
    engine = walk.replay(moves)
    events = engine.events("wf")
    decided = [i for i, e in enumerate(events) if isinstance(e, ev.DecisionRecorded)]
    made = [(events[i].step, events[i].decision, i) for i in decided]  # type: ignore[attr-defined]
    return Path_(name, walk.raw, events, made)


def _explore(name: str, walk: _Walk, moves: list[tuple[str, str]]) -> Iterator[Path_]:
    engine = walk.replay(moves)
    state = engine.state("wf")
    if state.terminal or not state.assignments:
        yield _path(name, walk, moves)
        return
    step = state.step or ""
    if step == "submitter":
        yield _path(f"{name}/withdraw", walk, [*moves, (SUBMITTER, "reject")])
        if not any(who == SUBMITTER for who, _ in moves):
            yield from _explore(f"{name}/resubmit", walk, [*moves, (SUBMITTER, "approve")])
        return
    first = _deciders(engine)[0]
    for decision in ("reject", "send_back"):
        yield _path(f"{name}/{step}:{decision}", walk, [*moves, (first, decision)])
    if not moves:
        yield _path(f"{name}/withdrawn", walk, [(SUBMITTER, "cancel")])
    if state.compensations:
        yield _path(f"{name}/{step}:cancelled", walk, [*moves, ("olga", "cancel")])
    # one approval at a time: a step that needs all of its approvers is asked again
    yield from _explore(f"{name}/{step}:approve", walk, [*moves, (first, "approve")])


def demo_paths() -> list[Path_]:
    """Every path through every demo template, for each of its data routes."""
    out: list[Path_] = []
    for key, raw in demo_definitions().items():
        for n, data in enumerate(DATA[key]):
            out.extend(_explore(f"{key}#{n}", _Walk(raw, data), []))
    return out


def engine_histories() -> list[Path_]:
    """The engine's recorded histories (tests/engine/histories)."""
    out = []
    for path in sorted(HISTORIES.glob("*.json")):
        doc = json.loads(path.read_text())
        events = [ev.event_from_dict(e) for e in doc["events"]]
        out.append(Path_(path.stem, doc["definition"], events))
    return out


def entries(events: list[ev.Event]) -> list[Any]:
    """``events`` as the history's rows (``selectors.workflows.workflow_history``)."""
    import datetime as dt

    at = dt.datetime(2026, 12, 6, 9, 0, tzinfo=dt.UTC)
    rows = []
    for seq, e in enumerate(events, start=1):
        payload = e.to_dict()
        rows.append(
            SimpleNamespace(
                seq=seq,
                type=e.type,
                actor=payload.get("actor"),
                on_behalf_of=payload.get("on_behalf_of"),
                at=at,
                comment=payload.get("comment") or "",
                payload=payload,
            )
        )
    return rows
