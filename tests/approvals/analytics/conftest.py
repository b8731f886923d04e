from __future__ import annotations

from collections.abc import Iterator

import pytest

from .support import clock_back


@pytest.fixture(autouse=True)
def clock_put_back() -> Iterator[None]:
    """The clock these tests move on is the process's: put it back for the next test."""
    yield
    clock_back()
