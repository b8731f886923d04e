"""The analytics figures computed straight from the event table, the slow way: what
the read model's figures must equal. Written from the events' meaning, not from the
projection's code: a visit begins where a step asks someone (or something) to act and
ends at the event that takes the workflow off that step."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from approvals.models import WorkflowEvent

OPENS = {"ApprovalRequested": "approval", "WaitStarted": "wait", "SignalAwaited": "signal"}
ENDS = {
    "StepFailed",
    "CompensationStarted",
    "WorkflowCompleted",
    "WorkflowRejected",
    "WorkflowRolledBack",
    "CompensationFailed",
    "StepRetried",
}


def percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    at = fraction * (len(v) - 1)
    low = int(at)
    high = min(low + 1, len(v) - 1)
    return v[low] + (v[high] - v[low]) * (at - low)


def visits_from_events(tenant_id: int) -> list[dict[str, Any]]:
    rows = (
        WorkflowEvent.objects.filter(tenant_id=tenant_id)
        .order_by("workflow_id", "seq")
        .values_list("workflow_id", "workflow__template_key", "type", "payload", "created_at")
    )
    out: list[dict[str, Any]] = []
    by_workflow: dict[Any, list[tuple[Any, ...]]] = defaultdict(list)
    for r in rows:
        by_workflow[r[0]].append(r)
    for wid, events in by_workflow.items():
        current: dict[str, Any] | None = None
        data: dict[str, Any] = {}
        rejected = False
        for _, key, kind, p, at in events:
            if kind == "WorkflowStarted":
                data = dict(p.get("data") or {})
            if kind == "Resubmitted":
                data = dict(p.get("data") or {})
            if current is not None:
                end = None
                if kind == "DecisionRecorded" and p["decision"] == "reject":
                    rejected = True
                if kind == "Escalated":
                    current["escalated"] = True
                if kind == "SentBack":
                    end = "rejected" if rejected else "sent_back"
                elif (
                    kind == "StepCompleted"
                    and p["step"] == current["step"]
                    or kind == "Resubmitted"
                ):
                    end = "completed"
                elif kind == "WorkflowCancelled":
                    end = "cancelled"
                elif kind in ENDS:
                    end = "rejected" if rejected else "ended"
                if end:
                    current.update(left_at=at, outcome=end)
                    current = None
            started = None
            if kind in OPENS:
                started = (p["step"], OPENS[kind], p.get("due_at"))
            elif kind == "SentBack" and p.get("to_step") is None:
                started = ("submitter", "changes", None)
            if started:
                step, visit_kind, due = started
                current = {
                    "workflow": wid,
                    "template_key": key,
                    "step": step,
                    "kind": visit_kind,
                    "entered_at": at,
                    "left_at": None,
                    "due_at": dt.datetime.fromtimestamp(due, dt.UTC) if due else None,
                    "outcome": "",
                    "escalated": False,
                    "first": not any(v["workflow"] == wid for v in out),
                    "data": dict(data),
                }
                out.append(current)
                rejected = False
    # a visit opened in the same command as a resubmission reads the new data
    return out


def figures(
    visits: list[dict[str, Any]], now: dt.datetime
) -> dict[tuple[str, str], tuple[Any, ...]]:
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for v in visits:
        grouped[(v["template_key"], v["step"])].append(v)
    out = {}
    for key, vs in grouped.items():
        waits = [(v["left_at"] - v["entered_at"]).total_seconds() for v in vs if v["left_at"]]
        out[key] = (
            len(vs),
            sum(v["outcome"] == "completed" for v in vs),
            sum(v["outcome"] == "rejected" for v in vs),
            sum(v["outcome"] == "sent_back" for v in vs),
            sum(v["due_at"] is not None and (v["left_at"] or now) > v["due_at"] for v in vs),
            sum(v["escalated"] for v in vs),
            sum(v["left_at"] is None for v in vs),
            _rounded(percentile(waits, 0.5)),
            _rounded(percentile(waits, 0.9)),
        )
    return out


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 3)
