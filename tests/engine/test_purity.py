"""The engine stays pure: it imports nothing that reads the clock, does I/O or knows
about the app, and it never asks the time or the global random generator."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import templates_engine

PACKAGE = Path(templates_engine.__file__).parent
SOURCES = sorted(PACKAGE.rglob("*.py"))

# ``datetime`` itself is allowed: durations.py uses its timedelta type. Reading the
# time through it is caught by the call scan below.
FORBIDDEN_MODULES = {
    "django",
    "celery",
    "approvals",
    "config",
    "redis",
    "psycopg",
    "psycopg2",
    "requests",
    "httpx",
    "socket",
    "urllib",
    "http",
    "time",
    "os",
    "subprocess",
    "threading",
    "multiprocessing",
    "asyncio",
    "uuid",
    "secrets",
    "sqlite3",
    "logging",
}
CLOCK_READS = {"now", "utcnow", "today", "fromtimestamp", "time", "monotonic", "perf_counter"}
GLOBAL_RANDOM = {"random", "randint", "uniform", "choice", "shuffle", "seed", "randrange"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def imported_modules(tree: ast.Module) -> set[str]:
    """Top-level names of the modules ``tree`` imports (relative imports excluded)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def impure_calls(tree: ast.Module) -> list[str]:
    """Calls that read the clock (``datetime.now()``, ``date.today()``, ``dt.datetime
    .utcnow()``) or use the module-level random generator (``random.random()``)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr, owner = node.func.attr, node.func.value
        owner_name = (
            owner.id
            if isinstance(owner, ast.Name)
            else owner.attr
            if isinstance(owner, ast.Attribute)
            else ""
        )
        if attr in CLOCK_READS and owner_name in {"datetime", "date", "dt", "time"}:
            found.append(f"{owner_name}.{attr}() line {node.lineno}")
        if attr in GLOBAL_RANDOM and owner_name == "random":
            found.append(f"random.{attr}() line {node.lineno}")
    return found


def test_the_scan_sees_every_engine_module() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in SOURCES}

    assert {"decider.py", "state.py", "testing.py", "steps/approval.py"} <= names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_engine_module_imports_io_clock_or_the_app(path: Path) -> None:
    assert imported_modules(_tree(path)) & FORBIDDEN_MODULES == set()


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_engine_module_reads_the_clock_or_global_randomness(path: Path) -> None:
    assert impure_calls(_tree(path)) == []


@pytest.mark.parametrize(
    ("source", "module"),
    [
        ("import os", "os"),
        ("import django.db.models", "django"),
        ("from approvals.models import Workflow", "approvals"),
        ("from time import monotonic", "time"),
        ("import urllib.request as r", "urllib"),
    ],
)
def test_the_import_scan_catches_forbidden_imports(source: str, module: str) -> None:
    assert module in imported_modules(ast.parse(source)) & FORBIDDEN_MODULES


def test_the_import_scan_ignores_relative_imports() -> None:
    assert imported_modules(ast.parse("from .time import x\nfrom . import os")) == set()


@pytest.mark.parametrize(
    "source",
    [
        "datetime.now()",
        "datetime.datetime.utcnow()",
        "dt.datetime.now(dt.UTC)",
        "date.today()",
        "time.time()",
        "random.random()",
        "random.choice([1, 2])",
    ],
)
def test_the_call_scan_catches_clock_reads_and_global_randomness(source: str) -> None:
    assert len(impure_calls(ast.parse(source))) == 1


def test_the_call_scan_allows_an_injected_rng_and_timedelta() -> None:
    source = "rng.random()\nctx.rng.random()\ndt.timedelta(seconds=1)\nself.clock.now()"

    assert impure_calls(ast.parse(source)) == []
