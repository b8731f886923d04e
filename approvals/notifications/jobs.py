"""The hook an in-process scheduler calls each tick (``make run`` has no beat): re-send
what is due. Beat runs the same services as ``approvals.sweep_mail`` and
``approvals.send_digests`` (config/settings.py, CELERY_BEAT_SCHEDULE)."""

from __future__ import annotations

from .sender import mail_sweep


def notifications_tick() -> int:
    return mail_sweep()
