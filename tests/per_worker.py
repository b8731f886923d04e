"""What each pytest-xdist worker keeps to itself (``make test`` runs ``pytest -n 2``).

pytest-django gives every worker its own test database (``test_<name>_gw0``, ...).
Ports come from the OS (bind to port 0) and files go under ``tmp_path``. What is left is
Redis: the tests flush the broker's database and read what is queued there, so each
worker uses its own database number, the configured one plus the worker's index
(``redis://127.0.0.1:6379/12`` is 12 for gw0 and 13 for gw1). Run without xdist, every
URL stays as configured.

A resource no worker can have a copy of (the machine's PostgreSQL server, RabbitMQ's
application) is used by tests of one ``xdist_group``, or by a test that runs alone."""

from __future__ import annotations

import os
import re

REDIS_DATABASES = 16  # redis.conf's default `databases`


def worker_index() -> int:
    """0 for ``gw0`` (and without xdist), 1 for ``gw1``, ..."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def redis_url_of_worker(url: str) -> str:
    """``url`` (a ``redis://`` URL) moved to this worker's database number."""
    index = worker_index()
    if not index or not url.startswith(("redis://", "rediss://")):
        return url
    m = re.fullmatch(r"(?P<base>rediss?://[^/?#]*)(?:/(?P<db>\d*))?(?P<rest>[?#].*)?", url)
    if m is None:
        raise ValueError(f"cannot give each xdist worker its own database of {url!r}")
    db = int(m["db"] or 0) + index
    if db >= REDIS_DATABASES:
        raise ValueError(
            f"{url!r}: xdist worker gw{index} would use Redis database {db}, past the last"
            f" ({REDIS_DATABASES - 1}); configure a lower database number or fewer workers"
        )
    return f"{m['base']}/{db}{m['rest'] or ''}"
