from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _fresh_throttles() -> Any:
    """DRF throttles count in the process's cache; start every test from zero."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
