"""The analytics rollup's buckets, pure arithmetic the page and the triggers share
(``runtime.rollup`` keeps the rollup; ``selectors.analytics_rollup`` reads it): bucket 0
holds waits under a minute, buckets 1 to ``LOG_BUCKETS`` split one minute to one year in
equal ratios (each about 10% wider than the one before), the last one a year or more. A
percentile read from it takes each wait as its bucket's geometric middle: within
``ERROR`` (5%) of the exact one, or half a minute for waits under a minute."""

from __future__ import annotations

import datetime as dt
import math

LOG_BUCKETS = 136
MINUTE = 60.0
YEAR = 365 * 86400.0
RATIO = (YEAR / MINUTE) ** (1 / LOG_BUCKETS)
ERROR = math.sqrt(RATIO) - 1  # about 4.96%
OPEN, UNDER_A_MINUTE, OVER_A_YEAR = -1, 0, LOG_BUCKETS + 1


def bucket_seconds(bucket: int) -> float:
    """The wait a bucket stands for: its geometric middle (half a minute for the waits
    under a minute, a year for those over)."""
    if bucket <= UNDER_A_MINUTE:
        return MINUTE / 2
    if bucket >= OVER_A_YEAR:
        return YEAR
    return MINUTE * RATIO ** (bucket - 0.5)


def histogram_percentile(counts: dict[int, int], fraction: float) -> dt.timedelta | None:
    """``percentile_cont`` over the histogram: the waits at the ranks either side of
    ``fraction * (n - 1)``, each taken as its bucket's middle, interpolated between. Each
    middle is within ``ERROR`` of its wait (half a minute under a minute), so the result
    is within ``ERROR`` of the exact percentile, or half a minute."""
    closed = sorted((b, c) for b, c in counts.items() if b != OPEN and c > 0)
    n = sum(c for _, c in closed)
    if n <= 0:
        return None

    def at_rank(rank: int) -> float:
        seen = 0
        for bucket, count in closed:
            seen += count
            if seen > rank:
                return bucket_seconds(bucket)
        return bucket_seconds(closed[-1][0])  # pragma: no cover - ranks are below n

    at = fraction * (n - 1)
    low = math.floor(at)
    lo, hi = at_rank(low), at_rank(min(low + 1, n - 1))
    return dt.timedelta(seconds=round(lo + (hi - lo) * (at - low), 3))


BUCKETS = LOG_BUCKETS + 2  # under a minute, the log-scale ones, a year or more
SLOTS = 48  # half-hours of a UTC day
SLOT_SECONDS = 1800
COUNTS = (
    "visits",
    "waiting",
    "completed",
    "rejected",
    "sent_back",
    "breached",
    "escalated",
)
