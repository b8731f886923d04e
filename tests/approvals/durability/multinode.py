"""The processes of the multi-node fault test (test_multi_node.py) that need Django, run
with DATABASE_URL and CELERY_BROKER_URL in the environment:

``python multinode.py seed QUEUE``
    seeds the demo organisation, publishes the ``multinode`` template (an activity on
    QUEUE, then the manager's approval with a one-second reminder) and prints
    ``{"alice": token, "bob": token, "audrey": token}``.

``python multinode.py worker QUEUE``
    the production Celery worker with ``multinode_effect`` registered.

``python multinode.py report``
    prints what the test checks, as JSON (see ``report``).

The web nodes and the timer pollers are the production commands themselves
(``gunicorn config.wsgi``, ``manage.py run_scheduler``): neither runs an activity.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.db.models import Count  # noqa: E402

from approvals.activities import activity  # noqa: E402
from tests.approvals.durability.activities import _record, effect_table_create  # noqa: E402

TEMPLATE = "multinode"
RETRY = {"max_attempts": 30, "initial_interval": 0.2, "max_interval": 1, "jitter": False}
# Long enough that a broker or node restart finds activities running.
EFFECT_SECONDS = 0.2


@activity("multinode_effect", queue="multinode")
def multinode_effect(key: str, data: dict[str, Any]) -> dict[str, Any]:
    """A downstream call keyed by the attempt's idempotency key: ``durability_effect``
    counts distinct effects and calls (a repeat adds a call, not an effect)."""
    time.sleep(EFFECT_SECONDS)
    return {"key": key, "new": _record(key)}


def template(queue: str) -> dict[str, Any]:
    return {
        "key": TEMPLATE,
        "title": "Several nodes",
        "steps": [
            {
                "id": "effect",
                "kind": "action",
                "activity": "multinode_effect",
                "queue": queue,
                "timeout": "PT5S",
                "retry": RETRY,
            },
            {
                "id": "manager",
                "kind": "approval",
                "approvers": [{"manager": "submitter"}],
                "reminders": ["PT1S"],
            },
        ],
    }


def seed(queue: str) -> None:
    from approvals.demo import seed_demo
    from approvals.models import User
    from approvals.services.templates import workflow_template_publish
    from approvals.services.tokens import token_issue
    from templates_engine import retry

    tenant = seed_demo()
    effect_table_create()
    # RETRY's fifth of a second keeps the faults short: allowed in this test's own
    # process only (publish refuses under retry.MIN_INITIAL_INTERVAL).
    retry.MIN_INITIAL_INTERVAL = 0.0
    workflow_template_publish(tenant=tenant, definition=template(queue))
    tokens = {
        name: token_issue(user=User.objects.get(username=name), name="multinode")[1]
        for name in ("alice", "bob", "audrey")  # audrey: the auditor, who searches and exports
    }
    print(json.dumps(tokens), flush=True)


def worker(queue: str) -> None:
    from config.celery import app

    app.worker_main(
        [
            "worker",
            "--queues",
            queue,
            "--concurrency",
            "2",
            "--pool",
            "prefork",
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
            "--hostname",
            f"multinode-{os.getpid()}@%h",
        ]
    )


def _counts(rows: Any, field: str) -> dict[str, int]:
    return {
        str(k): n
        for k, n in rows.values_list(field).annotate(n=Count("pk")).values_list(field, "n")
    }


def report() -> dict[str, Any]:
    """Events by request id, workflows and start keys by subject, activity outcomes,
    effects and timers, for every workflow of the template."""
    from django.db import connection

    from approvals import clock
    from approvals.models import ActivityAttempt, StartRequest, Timer, Workflow, WorkflowEvent

    workflows = Workflow.objects.filter(template_key=TEMPLATE)
    events = WorkflowEvent.objects.filter(workflow__template_key=TEMPLATE)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), coalesce(sum(calls), 0) FROM durability_effect")
        effects, calls = cursor.fetchone()
    return {
        "statuses": _counts(workflows, "public_status"),
        "by_subject": _counts(workflows, "subject_id"),
        "start_keys": _counts(StartRequest.objects.all(), "key"),
        "events_by_request": _counts(events.exclude(request_id=None), "request_id"),
        "started": events.filter(type="WorkflowStarted").count(),
        "succeeded_by_workflow": _counts(events.filter(type="ActivitySucceeded"), "workflow_id"),
        "attempts_open": ActivityAttempt.objects.filter(finished_at=None).count(),
        "reminders_by_workflow": _counts(events.filter(type="ReminderSent"), "workflow_id"),
        "timers_fired": Timer.objects.filter(workflow__in=workflows).exclude(fired_at=None).count(),
        "timers_due_unfired": Timer.objects.filter(
            workflow__in=workflows, fired_at=None, fire_at__lte=clock.now()
        ).count(),
        "timers_dead": Timer.objects.exclude(dead_at=None).count(),
        "timers_by_kind": _counts(Timer.objects.exclude(fired_at=None), "kind"),
        "effects": int(effects),
        "effect_calls": int(calls),
    }


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "seed":
        seed(args[0])
    elif command == "worker":
        worker(args[0])
    elif command == "report":
        print(json.dumps(report()), flush=True)
    else:
        sys.exit(f"unknown command {command!r}")
