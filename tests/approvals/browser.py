"""Headless Chromium for the browser tests: Debian's binary, the flags this machine
needs, and one ``browser`` fixture per test module (import it into the module)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    # Playwright's sync API refuses to start inside a running event loop; pytest has none.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield launched
        launched.close()
