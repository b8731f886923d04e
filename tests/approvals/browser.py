"""Headless Chromium for the browser tests: Debian's binary and the flags this machine
needs. tests/conftest.py's ``browser`` fixture (one per test module) imports this module
when a test asks for it, so Playwright is loaded for the browser tests only; those
modules are marked ``pytest.mark.browser``.

Without /usr/bin/chromium a browser test is skipped on a developer's machine and fails
under CI (the environment variable CI set, as .ci/run sets it): a CI run must not pass
having shown no page."""

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
MISSING = f"Chromium is not installed ({CHROMIUM}; `make services` installs Debian's chromium)"


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def chromium_required() -> None:
    """Skip the test when Chromium is missing, or fail it under CI."""
    if os.path.exists(CHROMIUM):
        return
    if under_ci():
        pytest.fail(f"{MISSING}: CI runs every browser test", pytrace=False)
    pytest.skip(MISSING)


def launched() -> Iterator[Any]:
    """A headless Chromium for one test module (the ``browser`` fixture's body)."""
    chromium_required()
    from playwright.sync_api import sync_playwright

    # Playwright's sync API refuses to start inside a running event loop; pytest has none.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield browser
        browser.close()


def linked_pages(
    page: Any, base: str, *, under: str = "/", skip: tuple[str, ...] = ()
) -> list[str]:
    """The app's own pages the current page links to (path and query, each once): on
    ``base``, below ``under``, none starting with one of ``skip``."""
    from urllib.parse import urlsplit

    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    found: list[str] = []
    for href in hrefs:
        parts = urlsplit(href)
        if f"{parts.scheme}://{parts.netloc}" != base or not parts.path.startswith(under):
            continue
        url = parts.path + (f"?{parts.query}" if parts.query else "")
        if not parts.path.startswith(skip) and url not in found:
            found.append(url)
    return found
