"""The engine alone (no Django, no database): replay rate, a long history, decide cost.

    .venv/bin/python bench/engine.py

Histories are produced by the engine itself (``decide`` then ``evolve``), never
written by hand.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, Report, verdict  # noqa: E402

from templates_engine import Context, Definition, State, StaticDirectory, decide, evolve, replay
from templates_engine import commands as cmd
from templates_engine import events as ev
from templates_engine.events import event_from_dict

REPLAY_TARGET_PER_S = 20_000
BIG_EVENTS = 51_200
BIG_TARGET_S = 0.5

DIRECTORY = StaticDirectory(
    managers={"alice": "bob", "bob": "victor", "carol": "victor", "fiona": "victor"},
    groups={"finance": ["fiona"]},
    users=frozenset({"alice", "bob", "carol", "victor", "fiona"}),
)
DATA = {"amountPaise": 4_500_000, "currency": "INR", "department": "sales"}


def expense_definition() -> Definition:
    doc = json.loads((ROOT / "approvals" / "demo" / "expense-approval.json").read_text())
    return Definition.parse(doc, version=1)


class Run:
    """One workflow driven through decide/evolve, keeping its history."""

    def __init__(self, definition: Definition) -> None:
        self.definition = definition
        self.state = State()
        self.events: list[ev.Event] = []
        self.now = 1_750_000_000.0

    def send(self, command: cmd.Command, *, advance: float = 1.0) -> list[ev.Event]:
        self.now += advance
        out = decide(
            self.definition, self.state, command, Context(now=self.now, directory=DIRECTORY)
        )
        for e in out:
            self.state = evolve(self.state, e)
        self.events.extend(out)
        return out


def best_rate(fn: Any, *, seconds: float = 1.0, repeats: int = 5) -> tuple[float, float]:
    """Calls per second of ``fn`` (best and median of ``repeats`` timed runs)."""
    n = 1
    while True:  # calibrate a batch to ~seconds/repeats
        t = time.perf_counter()
        for _ in range(n):
            fn()
        took = time.perf_counter() - t
        if took > seconds / repeats / 4:
            break
        n *= 2
    n = max(1, int(n * (seconds / repeats) / took))
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        rates.append(n / (time.perf_counter() - t))
    return max(rates), statistics.median(rates)


def main() -> None:
    report = Report("engine", "Engine (pure Python, no database)")
    d = expense_definition()

    # A workflow pending finance: start (2 events) + the manager's approval (4 events).
    r = Run(d)
    r.send(cmd.Start(DATA, "alice"))
    r.send(cmd.Decide("bob", "approve"))
    six = list(r.events)
    assert len(six) == 6, [e.type for e in six]
    r.send(cmd.Decide("fiona", "approve"))
    nine = list(r.events)
    assert r.state.status == "COMPLETED"
    six_types = ", ".join(e.type for e in six)
    report.note(f"6-event history (pending finance): {six_types}")
    six_dicts = [e.to_dict() for e in six]

    best6, med6 = best_rate(lambda: replay(d, six))
    best9, med9 = best_rate(lambda: replay(d, nine))
    best6d, med6d = best_rate(lambda: replay(d, (event_from_dict(x) for x in six_dicts)))

    # A long history the engine really produces: an approval handed back and forth by
    # delegation (bob -> carol -> bob ...), each a TaskReassigned event.
    big = Run(d)
    big.send(cmd.Start(DATA, "alice"))
    holder, other = "bob", "carol"
    t = time.perf_counter()
    while len(big.events) < BIG_EVENTS:
        big.send(cmd.Decide(holder, "delegate", delegate_to=other), advance=60.0)
        holder, other = other, holder
    build_s = time.perf_counter() - t
    events = big.events
    assert len(events) == BIG_EVENTS
    expected = big.state
    big_dicts = [e.to_dict() for e in events]

    gc.collect()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        state = replay(d, events)
        times.append(time.perf_counter() - t)
    assert state == expected
    big_best, big_med = min(times), statistics.median(times)

    times_d = []
    for _ in range(3):
        t = time.perf_counter()
        replay(d, (event_from_dict(x) for x in big_dicts))
        times_d.append(time.perf_counter() - t)

    gc.collect()
    tracemalloc.start()
    replay(d, events)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    replay(d, (event_from_dict(x) for x in big_dicts))
    _, peak_d = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    report.table(
        "Replay",
        ["history", "events", "replays/s (best)", "replays/s (median)", "target", "result"],
        [
            [
                "pending finance (event objects)",
                6,
                best6,
                med6,
                f">= {REPLAY_TARGET_PER_S:,}/s",
                verdict(med6 >= REPLAY_TARGET_PER_S),
            ],
            ["pending finance (from stored JSON)", 6, best6d, med6d, "-", "-"],
            ["completed expense", 9, best9, med9, "-", "-"],
        ],
    )
    report.table(
        f"Long history ({BIG_EVENTS:,} events: 1 start + delegations back and forth)",
        ["measure", "value", "target", "result"],
        [
            [
                "replay, event objects (best of 5), s",
                big_best,
                f"<= {BIG_TARGET_S}",
                verdict(big_best <= BIG_TARGET_S),
            ],
            [
                "replay, event objects (median of 5), s",
                big_med,
                f"<= {BIG_TARGET_S}",
                verdict(big_med <= BIG_TARGET_S),
            ],
            [
                "replay from stored JSON dicts (median of 3), s",
                statistics.median(times_d),
                "-",
                "-",
            ],
            ["events/s (median, objects)", BIG_EVENTS / big_med, "-", "-"],
            ["peak traced memory during replay, KiB", peak / 1024, "-", "-"],
            ["peak traced memory, replay from JSON, KiB", peak_d / 1024, "-", "-"],
            ["building it with decide+evolve, s", build_s, "-", "-"],
        ],
    )

    # decide per command, from a fresh state each time (CEL `when` and the JSON schema
    # are evaluated inside).
    started = Run(d)
    started.send(cmd.Start(DATA, "alice"))
    s_after_start = started.state
    s_new = State()
    start_cmd = cmd.Start(DATA, "alice")
    approve_cmd = cmd.Decide("bob", "approve")
    delegate_cmd = cmd.Decide("bob", "delegate", delegate_to="carol")
    ctx = Context(now=1_750_000_100.0, directory=DIRECTORY)
    rows = []
    for label, state, command in [
        ("Start (schema + 3 CEL `when`s, assigns the manager)", s_new, start_cmd),
        ("Decide approve (manager; CEL for vp + finance)", s_after_start, approve_cmd),
        ("Decide delegate", s_after_start, delegate_cmd),
    ]:
        best, med = best_rate(lambda state=state, command=command: decide(d, state, command, ctx))
        rows.append([label, 1e6 / best, 1e6 / med, med])
    report.table(
        "decide per command",
        ["command", "us/command (best)", "us/command (median)", "commands/s (median)"],
        rows,
    )
    report.write()


if __name__ == "__main__":
    main()
