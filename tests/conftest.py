"""Shared fixtures. Tests outside tests/engine run on the real PostgreSQL and Redis
(``make test`` sets DATABASE_URL and CELERY_BROKER_URL)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests import properties  # noqa: F401  (registers the Hypothesis profiles, loads one)
from tests.per_worker import redis_url_of_worker

_counter = itertools.count(1)

# Under pytest-xdist each worker has a Redis database of its own for the broker (see
# tests/per_worker.py). Celery reads CELERY_BROKER_URL from the environment, as do the
# tests and the processes they start; set before any test module is imported.
if os.environ.get("CELERY_BROKER_URL"):
    os.environ["CELERY_BROKER_URL"] = redis_url_of_worker(os.environ["CELERY_BROKER_URL"])

# A test that uses one of these fixtures carries the marker (set in its module).
FIXTURE_MARKERS = {
    "browser": "browser",  # headless Chromium
    "processes": "topology",  # workers and pollers as processes (tests/approvals/durability)
    "procs": "topology",  # a mail worker as a process (tests/approvals/notifications)
    "s3_endpoint": "topology",  # moto's S3 server as a process
}


class QuickHasher(PBKDF2PasswordHasher):
    """PBKDF2 with few rounds. A hash carries its round count, so the servers and
    workers tests start verify these with Django's own hasher; a test that creates
    people no longer spends a second on each password."""

    iterations = 1000


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["tests.conftest.QuickHasher", *settings.PASSWORD_HASHERS]
    if os.environ.get("CELERY_BROKER_URL"):
        settings.CELERY_BROKER_URL = os.environ["CELERY_BROKER_URL"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse a test that uses a browser or process fixture without its marker, so that
    ``-m "not browser and not topology"`` leaves out everything that needs them."""
    unmarked = [
        f"{item.nodeid}: uses {fixture}, not marked {marker}"
        for item in items
        for fixture, marker in FIXTURE_MARKERS.items()
        if fixture in getattr(item, "fixturenames", ()) and item.get_closest_marker(marker) is None
    ]
    if unmarked:
        raise pytest.UsageError("\n".join(["Mark these tests (pytestmark):", *unmarked]))


@pytest.fixture
def acme(db: Any) -> Any:
    """The demo organisation, seeded as ``make run`` seeds it."""
    from approvals.demo import seed_demo

    return seed_demo()


@pytest.fixture
def api() -> Callable[..., Any]:
    """``api("alice")``: an API client signed in with a bearer token."""
    from rest_framework.test import APIClient

    from approvals.models import User
    from approvals.services.tokens import token_issue

    def make(username: str) -> APIClient:
        client = APIClient()
        _, secret = token_issue(user=User.objects.get(username=username), name="test")
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        return client

    return make


@pytest.fixture
def unique() -> Callable[[str], str]:
    return lambda prefix: f"{prefix}-{next(_counter)}"


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: Any, django_db_blocker: Any) -> None:
    """Let this throw-away test database be emptied between transactional tests; the
    events table refuses TRUNCATE everywhere else."""
    from django.db import connection

    with django_db_blocker.unblock():
        name = connection.settings_dict["NAME"]
        with connection.cursor() as cursor:
            cursor.execute(f'ALTER DATABASE "{name}" SET approvals.allow_truncate = on')
        connection.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, one per test module that asks for it (tests/approvals/browser.py,
    imported here, when a browser test starts: Playwright is not loaded for the rest)."""
    from tests.approvals.browser import launched

    yield from launched()
