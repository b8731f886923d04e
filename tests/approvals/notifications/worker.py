"""A Celery worker for the mail delivery tests: the production worker, run as
``python worker.py`` with DATABASE_URL, CELERY_BROKER_URL and the EMAIL_* settings in
the environment; the tests kill it with SIGKILL."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from config.celery import app  # noqa: E402

if __name__ == "__main__":
    app.worker_main(
        [
            "worker",
            "--queues",
            sys.argv[1],
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
            f"mail-{os.getpid()}@%h",
        ]
    )
