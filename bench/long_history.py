"""A workflow with a long history decides as fast as a new one: the command path loads
state from ``Workflow.snapshot`` (the engine state after the last event), so the
history's length never enters a decision.

    .venv/bin/python bench/long_history.py [--events 50000] [--decisions 300]

One workflow is sent back and forth (bob approves, farah sends it back to bob) through
``workflow_decide`` until its history holds ``--events`` events; it is kept and grown
on later runs. Then ``--decisions`` decisions are timed on it and as many on new
workflows of the same template, alternating, with the SQL statements each took. For
contrast, the replay of the whole history (what a decision would cost without the
snapshot) is timed once.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Report, setup_django, summarize_ms  # noqa: E402

TEMPLATE = {
    "key": "bench-back-and-forth",
    "title": "Sent back and forth",
    "steps": [
        {"id": "manager", "kind": "approval", "approvers": [{"user": "bob"}]},
        {
            "id": "finance",
            "kind": "approval",
            "approvers": [{"user": "farah"}],
            "send_back_to": "manager",
        },
    ],
}
LONG_SUBJECT = "long-history"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--decisions", type=int, default=300)
    args = ap.parse_args()

    setup_django()
    from _common import seed
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from approvals.definitions import definition_for
    from approvals.models import Workflow, WorkflowEvent
    from approvals.runtime.commands import load_state
    from approvals.selectors.templates import workflow_template_latest
    from approvals.services.templates import workflow_template_publish
    from approvals.services.workflows import workflow_decide, workflow_start

    org = seed()
    tenant, alice, bob, farah = org["tenant"], org["alice"], org["bob"], org["farah"]
    if workflow_template_latest(tenant_id=tenant.pk, key=TEMPLATE["key"]) is None:
        workflow_template_publish(tenant=tenant, definition=TEMPLATE)

    def start(subject: str) -> str:
        return str(
            workflow_start(
                submitter=alice,
                template_key=TEMPLATE["key"],
                subject_type="bench-long",
                subject_id=subject,
                data={},
            ).workflow_id
        )

    def decide(user: object, wid: str, decision: str) -> None:
        workflow_decide(
            user=user,  # type: ignore[arg-type]
            workflow_id=wid,
            decision=decision,
            request_id=uuid.uuid4().hex,
        )

    def back_and_forth(wid: str) -> None:
        """One round: bob approves, farah sends it back to him."""
        decide(bob, wid, "approve")
        decide(farah, wid, "send_back")

    long = Workflow.objects.filter(subject_type="bench-long", subject_id=LONG_SUBJECT).first()
    wid = str(long.pk) if long is not None else start(LONG_SUBJECT)
    built_from = Workflow.objects.get(pk=wid).version
    t = time.perf_counter()
    while (version := Workflow.objects.get(pk=wid).version) < args.events:
        for _ in range(200):
            back_and_forth(wid)
        print(f"  {version:,} events", flush=True)
    build_s = time.perf_counter() - t
    events = WorkflowEvent.objects.filter(workflow_id=wid).count()

    # Timed: the same decision (bob approves, farah sends back) on the long workflow and
    # on a new one, alternating so both see the same machine load.
    long_lat: list[float] = []
    new_lat: list[float] = []
    long_sql = new_sql = 0
    for i in range(args.decisions // 2):
        fresh = start(f"new-{uuid.uuid4().hex[:10]}-{i}")
        for target, lat in ((wid, long_lat), (fresh, new_lat)):
            for user, decision in ((bob, "approve"), (farah, "send_back")):
                connection.queries_log.clear()  # the log keeps 9,000: count from empty
                with CaptureQueriesContext(connection) as q:
                    t0 = time.perf_counter()
                    decide(user, target, decision)
                    lat.append(time.perf_counter() - t0)
                if target == wid:
                    long_sql += len(q.captured_queries)
                else:
                    new_sql += len(q.captured_queries)

    # Contrast: what loading the state would cost without the snapshot.
    wf = Workflow.objects.get(pk=wid)
    definition = definition_for(wf.template_id)
    wf.snapshot = {}
    t0 = time.perf_counter()
    replayed = load_state(wf, definition)
    replay_s = time.perf_counter() - t0
    assert replayed.step == "manager"

    report = Report("long_history", f"Long histories: a workflow with {events:,} events")
    a, b = summarize_ms(long_lat), summarize_ms(new_lat)
    report.table(
        "Decisions on a long history and on new workflows (in-process, one thread)",
        ["workflow", "events before", "decisions", "ms p50", "ms p95", "SQL per decision"],
        [
            ["long history", events, a["n"], a["p50"], a["p95"], long_sql / max(1, a["n"])],
            ["new", "2 to 8", b["n"], b["p50"], b["p95"], new_sql / max(1, b["n"])],
        ],
    )
    report.table(
        "Without the snapshot (not what a decision does)",
        ["measure", "value"],
        [
            [f"replay of {events:,} events to the state, ms", replay_s * 1000],
            [f"history built this run: {built_from:,} -> {events:,} events, s", build_s],
        ],
    )
    report.note(
        "A decision reads the workflow row with its snapshot under the row lock, decides, "
        "and appends; the replay runs only when a snapshot is missing (a workflow with no "
        "events yet, or a snapshot of an older shape that no longer reads)."
    )
    report.note(
        "p50 ratio long/new: "
        f"{a['p50'] / b['p50']:.2f}; the same statements run for both (the SQL count per "
        "decision is the same)."
    )
    report.markdown.append(
        "Command: `.venv/bin/python bench/run_all.py long_history` (this section), or "
        "`.venv/bin/python bench/long_history.py --events 50000 --decisions 300` alone."
    )
    report.write()


if __name__ == "__main__":
    main()
