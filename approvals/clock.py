"""The app's one clock. Services read time here, never ``timezone.now()`` directly, so
tests and the scheduler can drive time without sleeping through real deadlines."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.utils import timezone

_offset = dt.timedelta(0)
_frozen: dt.datetime | None = None
_lock = threading.Lock()


def now() -> dt.datetime:
    if _frozen is not None:
        return _frozen + _offset
    return timezone.now() + _offset


def from_epoch(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)


def advance(delta: dt.timedelta) -> None:
    """Move this process's clock forward (tests, and the demo's time-travel command)."""
    global _offset
    with _lock:
        _offset += delta


@contextmanager
def shifted(delta: dt.timedelta) -> Iterator[None]:
    """Run a block with the clock moved by ``delta``; restore it afterwards."""
    advance(delta)
    try:
        yield
    finally:
        advance(-delta)


@contextmanager
def frozen(at: dt.datetime) -> Iterator[None]:
    """Run a block with the clock standing at ``at`` (aware); ``advance`` moves it on
    from there. For tests of what happens at an hour of someone's day."""
    global _frozen, _offset
    with _lock:
        saved = (_frozen, _offset)
        _frozen, _offset = at, dt.timedelta(0)
    try:
        yield
    finally:
        with _lock:
            _frozen, _offset = saved
