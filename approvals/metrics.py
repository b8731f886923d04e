"""Prometheus metrics. Counters live here; gauges that read tables are computed when
/metrics is scraped (see ``selectors.health``)."""

from __future__ import annotations

from prometheus_client import Counter

DUPLICATES = Counter(
    "approvals_command_duplicates_total",
    "Commands whose request id was already recorded (answered from the record).",
    ["command"],
)
VERSION_CONFLICTS = Counter(
    "approvals_version_conflicts_total",
    "Appends that lost a race on (workflow, seq) and were retried.",
)
ACTIVITY_ATTEMPTS = Counter(
    "approvals_activity_attempts_total", "Activity attempts run by this process.", ["activity"]
)
ACTIVITY_FAILURES = Counter(
    "approvals_activity_failures_total", "Activity attempts that failed.", ["activity", "error"]
)
ACTIVITY_LATE_RESULTS = Counter(
    "approvals_activity_late_results_total",
    "Activity outcomes that arrived after their attempt had already been recorded as timed out.",
    ["activity"],
)
TIMERS_FIRED = Counter("approvals_timers_fired_total", "Timers delivered by the poller.")
REPLICA_FALLBACKS = Counter(
    "approvals_replica_fallbacks_total",
    "Reads meant for the streaming replica that went to the primary: 'unfit' (behind by"
    " more than APPROVALS_REPLICA_MAX_LAG_SECONDS, or not answering), 'failed' (it failed"
    " under the read), 'resumed' (it failed under a stream, which went on from the primary).",
    ["reason"],
)
