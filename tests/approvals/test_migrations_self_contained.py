"""Migrations never import the app: each carries what it needs (Django's historical
models through ``apps.get_model``, its own copies of helpers and SQL), so a later change
to the app cannot change what an old migration does.

The one exception is what Django's migration writer itself references by path in a
field's definition (a default, a validator): those names are listed in ``ALLOWED``, one
by one. Reading approvals/sql/ from disk is not an import (migration 0046)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import approvals

PACKAGE = Path(approvals.__file__).parent
MIGRATION_FOLDERS = (PACKAGE / "migrations", PACKAGE / "notifications" / "migrations")

# The project's own top-level packages: none may be imported by a migration.
APP_PACKAGES = ("approvals", "templates_engine", "config", "tests", "bench", "scripts")

# Model-level callables the migration writer references by their dotted path.
ALLOWED = frozenset(
    {
        "approvals.models.time_bounds.validate_stored_moment",  # 0018, a field's validator
        "approvals.models.drafts.new_idempotency_key",  # 0022, a field's default
    }
)

IMPORTERS = ("import_module", "importlib.import_module", "__import__")


def _is_app(module: str | None) -> bool:
    return bool(module) and str(module).split(".")[0] in APP_PACKAGES


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _allowed_use(name: str) -> bool:
    """``name`` is an allowed callable, or a module on the way to one."""
    return name in ALLOWED or any(a.startswith(name + ".") for a in ALLOWED)


def app_imports(source: str) -> list[tuple[int, str]]:
    """(line, what) for every way ``source`` reaches code of the app."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _is_app(alias.name):
                    continue
                if alias.asname is None and _allowed_use(alias.name):
                    modules.add(alias.name)
                else:
                    found.append((node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                found.append((node.lineno, f"from {'.' * node.level}{node.module or ''} import"))
            elif _is_app(node.module):
                for alias in node.names:
                    if f"{node.module}.{alias.name}" not in ALLOWED:
                        found.append((node.lineno, f"from {node.module} import {alias.name}"))
        elif isinstance(node, ast.Call) and _dotted(node.func) in IMPORTERS:
            found.append((node.lineno, f"{_dotted(node.func)}(...)"))
    # What an allowed ``import approvals.models.x`` is used for: the allowed names only.
    for node in ast.walk(tree):
        name = _dotted(node) if isinstance(node, ast.Attribute) else None
        used = name and any(name.startswith(m + ".") or name == m for m in modules)
        if name and used and not _allowed_use(name):
            found.append((node.lineno, f"uses {name}"))
    return sorted(set(found))


def migration_files() -> list[Path]:
    return sorted(p for folder in MIGRATION_FOLDERS for p in folder.glob("*.py"))


def test_no_migration_imports_the_app() -> None:
    files = migration_files()
    assert len(files) > 45, "every migration of approvals and approvals.notifications is read"
    offenders = {
        str(path.relative_to(PACKAGE.parent)): found
        for path in files
        if (found := app_imports(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, (
        "migrations must carry what they need (copy the helper or the SQL into the"
        f" migration; models through apps.get_model): {offenders}"
    )


def test_no_helper_module_beside_the_migrations() -> None:
    """No shared module a migration could import: every file there is a migration."""
    helpers = [
        p.name for p in migration_files() if p.name != "__init__.py" and not p.name[:4].isdigit()
    ]
    assert helpers == []


@pytest.mark.parametrize(
    "planted",
    [
        "from approvals.runtime import rollup",
        "def f():\n    from approvals.words.data import money_fields\n",
        "from ._ops import postgres_sql",
        "from . import _ops",
        "from approvals.migrations._ops import drop_foreign_key",
        "import approvals.runtime.rollup",
        "import approvals.models.time_bounds as tb",
        "import approvals.models.time_bounds\nX = approvals.models.time_bounds.EARLIEST",
        "from approvals.models.drafts import Draft",
        "from templates_engine import Definition",
        "from config import settings",
        "from importlib import import_module\nm = import_module('approvals.migrations.0034_x')",
        "import importlib\nm = importlib.import_module('approvals.runtime.rollup')",
    ],
)
def test_a_planted_import_is_caught(planted: str) -> None:
    assert app_imports(planted) != []


def test_the_allowed_callables_pass() -> None:
    source = (
        "import approvals.models.time_bounds\n"
        "from approvals.models.drafts import new_idempotency_key\n"
        "v = [approvals.models.time_bounds.validate_stored_moment]\n"
        "from django.db import migrations\n"
        "import django.db.models.deletion\n"
    )
    assert app_imports(source) == []
