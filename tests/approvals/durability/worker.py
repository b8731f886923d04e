"""A Celery worker for the durability tests: the production worker with the test
activities imported. Run as ``python worker.py QUEUES`` with DATABASE_URL and
CELERY_BROKER_URL in the environment; the tests kill it with SIGKILL."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from celery.signals import task_prerun  # noqa: E402

from config.celery import app  # noqa: E402
from tests.approvals.durability import activities  # noqa: E402


@task_prerun.connect
def hold_on_receive(**_: Any) -> None:
    """Lets a test kill the worker after it took the message, before the claim."""
    activities.hold(activities.broker(), "received")


if __name__ == "__main__":
    queues = sys.argv[1] if len(sys.argv) > 1 else activities.QUEUE
    app.worker_main(
        [
            "worker",
            "--queues",
            queues,
            "--concurrency",
            "1",
            "--pool",
            "prefork",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--hostname",
            f"durability-{os.getpid()}@%h",
        ]
    )
