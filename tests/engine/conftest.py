"""Fixtures for the engine tests. The engine is pure Python: nothing here needs a
database or Django settings."""

from __future__ import annotations

import random

import pytest

from templates_engine.testing import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(1_000.0)


@pytest.fixture
def rng() -> random.Random:
    return random.Random(1234)
