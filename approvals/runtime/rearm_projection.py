"""Projection of the admin's operations that touch a work queue row beyond what the
state's difference shows: a re-armed timer is due again now, its failures forgotten."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from templates_engine import events as ev

from ..models import Timer, Workflow


def project_operations(wf: Workflow, events: Sequence[ev.Event], now: dt.datetime) -> None:
    for e in events:
        if isinstance(e, ev.TimerRearmed):
            Timer.objects.filter(workflow_id=wf.pk, key=e.key, fired_at__isnull=True).update(
                dead_at=None, failures=0, last_error="", claimed_until=None, fire_at=now
            )
