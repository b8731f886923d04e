"""Fixtures for the page tests: the server's undo window (services.held_decisions)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from approvals import clock


@pytest.fixture
def undo_window_closed(settings: Any) -> None:
    """A decision sent from a page is due as soon as it is held: for tests of what
    follows a decision, not of its Undo."""
    settings.APPROVALS_UNDO_SECONDS = 0


@pytest.fixture
def server_clock() -> Iterator[Callable[[float], None]]:
    """``advance(seconds)`` moves the app's clock (the live server's too, which runs in
    this process); it is put back after the test."""
    moved: list[dt.timedelta] = []

    def advance(seconds: float) -> None:
        delta = dt.timedelta(seconds=seconds)
        clock.advance(delta)
        moved.append(delta)

    yield advance
    for delta in moved:
        clock.advance(-delta)
