"""The Celery application. Settings come from Django settings prefixed with ``CELERY_``."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("approvals")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The tasks live in approvals/workers/tasks.py, not in the app's top-level tasks.py.
app.autodiscover_tasks(["approvals.workers"])

# Read by Celery's Django fixup under this exact name: keep a worker's database
# connection for up to this many tasks instead of opening one per task. Tasks call
# close_old_connections() first, so a connection that broke is replaced.
app.conf.CELERY_DB_REUSE_MAX = 1000
