"""gunicorn's settings: ``gunicorn config.wsgi -c config/gunicorn.py`` (the Procfile's).

Each worker is a process with its own memory, so a counter kept in memory counts one
worker's share, and a scrape of /metrics saw whichever worker answered it. In
prometheus_client's multiprocess mode every worker writes its counters to its own file
under PROMETHEUS_MULTIPROC_DIR and /metrics adds up all the files (approvals/views.py).
The variable is set here, in the master, before any worker imports prometheus_client
(the mode is chosen at import). The directory is emptied when gunicorn starts, so a
restart begins at zero as counters do; files of workers that exited are kept, so what a
recycled worker counted stays in the totals.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.path.join(
    tempfile.gettempdir(), f"approvals-metrics-{os.getpid()}"
)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir

# Set on the command line as well (the Procfile's --workers wins over this).
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))


def on_starting(server: Any) -> None:
    shutil.rmtree(metrics_dir, ignore_errors=True)
    os.makedirs(metrics_dir, exist_ok=True)


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
