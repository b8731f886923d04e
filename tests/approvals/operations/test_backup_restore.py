"""The backup drill docs/operations.md documents: ``pg_dump -Fc`` of a database holding a
mixed history, ``pg_restore`` into a fresh database, then on the restored copy
``verify_audit``, ``verify_replay`` and ``rebuild_read_models --check`` pass, and the
read models rebuilt there from nothing equal the original's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings

from approvals.runtime.rebuild import read_models_of

from ..durability.conftest import database_url
from .test_rebuild import mixed_run  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not shutil.which("pg_dump"), reason="needs PostgreSQL's client tools"),
    pytest.mark.skipif(
        settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql",
        reason="a PostgreSQL drill",
    ),
]

# Run in the restored database: wipe every read model, rebuild them from the events, and
# print them (surrogate ids aside) as sorted reprs.
REBUILD_AND_PRINT = """
import json, django
django.setup()
from django.core.management import call_command
from approvals.models import Tenant
from approvals.runtime.rebuild import read_models_of
from tests.approvals.operations.test_rebuild import _wipe
acme = Tenant.objects.get(slug="acme")
_wipe()
call_command("rebuild_read_models", "--tenant", "acme")
models = read_models_of(tenant_id=acme.pk)
print(json.dumps({name: sorted(map(repr, rows)) for name, rows in models.items()}))
"""


def _reprs(models: dict[str, set[Any]]) -> dict[str, list[str]]:
    return {name: sorted(map(repr, rows)) for name, rows in models.items()}


@pytest.fixture
def restored_url() -> Any:
    source = database_url()
    name = f"{settings.DATABASES['default']['NAME']}_restored"
    admin = source.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield source.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _manage(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_dump_restored_into_a_fresh_database_verifies_and_rebuilds_equal(
    acme: Any,
    mixed_run: list[str],  # noqa: F811
    restored_url: str,
    tmp_path: Path,
) -> None:
    original = _reprs(read_models_of(tenant_id=acme.pk))
    assert all(original.values())  # tasks, timers, attempts, participants, workflows

    dump = tmp_path / "approvals.dump"
    subprocess.run(["pg_dump", "-Fc", "-f", str(dump), database_url()], check=True)
    subprocess.run(
        ["pg_restore", "--no-owner", "--no-privileges", "-d", restored_url, str(dump)],
        check=True,
    )

    audit = _manage(restored_url, "manage.py", "verify_audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    replay = _manage(restored_url, "manage.py", "verify_replay")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    check = _manage(restored_url, "manage.py", "rebuild_read_models", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "every read model matches the events" in check.stdout

    rebuilt = _manage(restored_url, "-c", REBUILD_AND_PRINT)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout.strip().splitlines()[-1]) == original
