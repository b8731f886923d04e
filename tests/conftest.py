"""Shared fixtures. Tests outside tests/engine run on the real PostgreSQL and Redis
(``make test`` sets DATABASE_URL and CELERY_BROKER_URL)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

_counter = itertools.count(1)


class QuickHasher(PBKDF2PasswordHasher):
    """PBKDF2 with few rounds. A hash carries its round count, so the servers and
    workers tests start verify these with Django's own hasher; a test that creates
    people no longer spends a second on each password."""

    iterations = 1000


def pytest_configure(config: pytest.Config) -> None:
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["tests.conftest.QuickHasher", *settings.PASSWORD_HASHERS]


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


# Headless Chromium, one per test module that asks for ``browser``.
from tests.approvals.browser import browser  # noqa: E402, F401
