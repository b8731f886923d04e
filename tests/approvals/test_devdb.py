"""The development PostgreSQL's bookkeeping (config/devdb.py) and the settings' one
database engine: what ``make run`` relies on, without starting a server (the first-run
test starts one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import devdb

ROOT = Path(__file__).resolve().parents[2]


def _pid_file(pgdata: Path, pid: int, status: str = "ready") -> None:
    pgdata.mkdir(exist_ok=True)
    lines = [str(pid), str(pgdata), "1765000000", "5432", str(pgdata), "", "0 0", status]
    (pgdata / "postmaster.pid").write_text("\n".join(lines) + "\n")


def test_no_cluster_means_no_url(tmp_path: Path) -> None:
    assert devdb.url(tmp_path / "pgdata") is None


def test_a_running_cluster_is_named_by_its_socket(tmp_path: Path) -> None:
    _pid_file(tmp_path, os.getpid())  # a live process stands in for the postmaster

    assert (
        devdb.url(tmp_path) == f"postgres://postgres@{str(tmp_path).replace('/', '%2F')}/approvals"
    )


def test_a_stale_pid_file_left_by_a_killed_server_is_not_a_cluster(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    _pid_file(tmp_path, dead.pid)

    assert devdb.url(tmp_path) is None


def test_a_cluster_still_starting_is_not_used_yet(tmp_path: Path) -> None:
    _pid_file(tmp_path, os.getpid(), status="starting")

    assert devdb.url(tmp_path) is None


def _settings_error(env: dict[str, str]) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DEBUG")}
    clean |= {"APPROVALS_DEV_PGDATA": "/nonexistent/pgdata", **env}
    done = subprocess.run(
        [sys.executable, "-c", "import config.settings"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0, done.stdout
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("debug", ["true", "false"])
def test_no_database_url_and_no_development_cluster_is_refused_in_words(debug: str) -> None:
    error = _settings_error({"DEBUG": debug})

    assert "DATABASE_URL must name a PostgreSQL server" in error
    assert "make run" in error


def test_a_database_other_than_postgresql_is_refused(tmp_path: Path) -> None:
    error = _settings_error({"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"})

    assert "DATABASE_URL must name a PostgreSQL server, not django.db.backends.sqlite3" in error
