"""The production Celery worker with the benchmark's activity imported:
``celery -A config worker -Q default -c 1`` as a script. Run with DATABASE_URL and
CELERY_BROKER_URL in the environment."""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

import time  # noqa: E402
from typing import Any  # noqa: E402

import bench_activities  # noqa: E402  (registers the activity)
from celery.signals import task_postrun, task_prerun  # noqa: E402

from config.celery import app  # noqa: E402


@task_prerun.connect
def _prerun(args: Any = None, **_: Any) -> None:
    """When the task body begins, per attempt id (for the benchmark's breakdown)."""
    if args:
        bench_activities.client().hset(bench_activities.PRERUN, str(args[0]), repr(time.time()))


@task_postrun.connect
def _postrun(args: Any = None, **_: Any) -> None:
    if args:
        bench_activities.client().hset(bench_activities.POSTRUN, str(args[0]), repr(time.time()))


if __name__ == "__main__":
    app.worker_main(
        [
            "worker",
            "--queues",
            sys.argv[1] if len(sys.argv) > 1 else "default",
            "--concurrency",
            "1",
            "--pool",
            "prefork",
            "--loglevel",
            "WARNING",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--hostname",
            f"bench-{os.getpid()}@%h",
        ]
    )
