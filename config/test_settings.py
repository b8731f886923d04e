"""Settings for the test suite (pytest's DJANGO_SETTINGS_MODULE): the production
settings with a throw-away SECRET_KEY and plain http. Set in the environment, before the
settings are read, so processes the tests start (workers, pollers) get them too; a value
already in the environment wins."""

import os

# The machine's PostgreSQL, as `make test` names it.
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/approvals")
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-never-used-in-production-4f9c2a7e1b")
os.environ.setdefault("APPROVALS_HTTPS", "false")
os.environ.setdefault("APPROVALS_AUDIT_SEAL_KEY", "test-only-seal-key-never-used-in-production")

from .settings import *  # noqa: E402, F403
