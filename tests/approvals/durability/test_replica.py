"""Reads from a real streaming replica. A private primary is made with the machine's
PostgreSQL 15 binaries (``initdb`` in a temporary folder), migrated, and copied with
``pg_basebackup -R`` into a hot standby; both listen on free ports. The app's process
(replica_reads.py) then searches, reads its inbox, decides, lags and loses the replica,
and this test checks in ``pg_stat_activity`` of both servers where each read went:

- a search opens the app's connection on the replica; the inbox read and the decision
  send it nothing and go to the primary;
- the replica holds the primary's roles and policies: acting for a tenant shows only
  that tenant's rows, acting for none shows none;
- a replica paused behind the primary past the setting is only asked its lag, and the
  search answers from the primary;
- a replica stopped under an export's download, after its first lines, loses none: the
  download goes on from the primary and reads as the primary's own export;
- a stopped replica loses no search: they answer, the same, from the primary; the lag
  gauge reads NaN."""

from __future__ import annotations

import json
import math
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.topology, pytest.mark.slow]

BIN = Path("/usr/lib/postgresql/15/bin")
ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("replica_reads.py")
APP = "approvals-replica-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_owner(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, its binaries run as ``postgres``."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _pg(tool: str, *args: str) -> None:
    done = subprocess.run(
        _as_owner([str(BIN / tool), *args]), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{tool} failed: {done.stdout}\n{done.stderr}"


class Pair:
    """A primary and its streaming replica, each a private cluster on its own port."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.primary, self.replica = folder / "primary", folder / "replica"
        self.primary_port, self.replica_port = _free_port(), _free_port()

    def url(self, port: int) -> str:
        return f"postgres://postgres@127.0.0.1:{port}/approvals"

    def start(self) -> None:
        _pg("initdb", "-D", str(self.primary), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        with (self.primary / "postgresql.conf").open("a") as conf:
            conf.write(
                f"port = {self.primary_port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.folder}'\nwal_level = replica\n"
                "max_wal_senders = 4\nfsync = off\n"
            )
        self.run("primary", self.primary)
        _pg("createdb", "-h", "127.0.0.1", "-p", str(self.primary_port), "-U", "postgres",
            "approvals")  # fmt: skip
        migrated = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": self.url(self.primary_port)},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert migrated.returncode == 0, migrated.stderr
        _pg("pg_basebackup", "-h", "127.0.0.1", "-p", str(self.primary_port), "-U", "postgres",
            "-D", str(self.replica), "-R", "-X", "stream")  # fmt: skip
        with (self.replica / "postgresql.conf").open("a") as conf:
            conf.write(f"port = {self.replica_port}\nhot_standby = on\n")
        self.run("replica", self.replica)

    def run(self, name: str, pgdata: Path) -> None:
        _pg("pg_ctl", "-D", str(pgdata), "-l", str(self.folder / f"{name}.log"), "-w", "start")

    def stop_command(self, pgdata: Path) -> list[str]:
        return _as_owner([str(BIN / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"])

    def stop(self) -> None:
        for pgdata in (self.replica, self.primary):
            if (pgdata / "postmaster.pid").exists():
                subprocess.run(self.stop_command(pgdata), capture_output=True, timeout=120)


@pytest.fixture
def pair() -> Iterator[Pair]:
    if not (BIN / "initdb").exists():
        pytest.skip("needs the machine's PostgreSQL 15 binaries")
    folder = Path(tempfile.mkdtemp(prefix="approvals-replica-"))
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    made = Pair(folder)
    try:
        made.start()
        yield made
    finally:
        made.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _observe(pair: Pair) -> dict[str, Any]:
    env = {
        **os.environ,
        "DATABASE_URL": pair.url(pair.primary_port),
        "DATABASE_REPLICA_URL": pair.url(pair.replica_port),
        "PGAPPNAME": APP,
        "REPLICA_STOP": json.dumps(pair.stop_command(pair.replica)),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
    }
    done = subprocess.run(
        [sys.executable, str(DRIVER)], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _starts(connections: list[list[str]]) -> list[str]:
    return [start for _, start in connections]


def test_search_reads_from_the_replica_and_falls_back_to_the_primary(pair: Pair) -> None:
    seen = _observe(pair)
    wid = seen["workflow"]

    # a search reads from the replica: the app had no connection there before it
    assert seen["replica_before_search"] == []
    assert len(seen["replica_after_search"]) == 1
    assert seen["found"] == [wid]
    assert float(seen["lag_gauge_up"]) < 30

    # the inbox and the decision stay on the primary: nothing more reached the replica
    assert seen["inbox"] == [wid]
    assert seen["decision_status"] == 200
    assert _starts(seen["replica_after_decision"]) == _starts(seen["replica_after_search"])
    assert _starts(seen["primary_after_decision"]) != _starts(seen["primary_before_decision"])
    assert seen["status_on_primary"] != "PENDING_MANAGER"

    # the replica holds the primary's roles and row-level security policies
    policy = seen["policy_on_replica"]
    assert policy["own"] >= 1
    assert policy["other"] == 0
    assert policy["none"] == 0

    # behind by more than the setting: asked its lag only, the search from the primary
    assert seen["lag_while_paused"] > 1
    assert seen["found_while_lagging"] == [wid]
    (last, _), *_ = seen["replica_while_lagging"]
    assert "pg_last_xact_replay_timestamp" in last
    assert seen["found_caught_up"] == [wid]

    # stopped under an export's download: it went on from the primary, and it is the
    # primary's export line for line (but the signed statement's own time and signature)
    # (its last statement there: the events' query, or a fetch from its cursor)
    under = [q for q, _ in seen["replica_under_export"]]
    assert any("approvals_workflowevent" in q or "FETCH" in q.upper() for q in under), under
    cut, whole = seen["export_cut"], seen["export_primary"]
    assert len(cut) == len(whole) > 4
    assert cut[:-1] == whole[:-1]
    statement = json.loads(cut[-1])["export"]
    assert statement["events"] == sum('"seq"' in line for line in cut[:-1]) > 0
    assert seen["fallbacks_after_export"].get("resumed", 0) == 1

    # stopped: no search lost, the same answer from the primary; the gauge says so
    assert seen["found_replica_down"] == [wid]
    assert seen["found_replica_down_again"] == [wid]
    assert math.isnan(float(seen["lag_gauge_down"]))
    assert seen["fallbacks"].get("failed", 0) >= 1
    assert seen["fallbacks"].get("unfit", 0) >= 1
