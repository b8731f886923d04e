"""The layers of the approvals app import only downward.

    front doors (api/, pages/, admin/, http/, views, ...)    workers/
                 \\                                             /
                   services/ (use-cases)  ------  selectors/ (reads)
                                 \\                /
                                  runtime/ (the command path)
                                        |
                       base helpers (clock, metrics, definitions, words/, activities)
                                        |
                                     models/

Wiring (urls, apps, checks, management commands, demo, migrations) may import
anything. Every import counts, the ones inside functions included. A module that
fits no layer fails the test: give it one in ``LAYERS``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import approvals

PACKAGE = Path(approvals.__file__).parent
ROOT = PACKAGE.parent

# Module (or package prefix) -> layer; the longest prefix wins.
LAYERS: dict[str, str] = {
    "approvals": "base",  # the package's __init__ only (a docstring), not a prefix
    "approvals.models": "models",
    # Base: small shared helpers the runtime and everything above may use.
    "approvals.clock": "base",
    "approvals.metrics": "base",
    "approvals.definitions": "base",
    "approvals.json_input": "base",
    # Words people read, shared by the command path, the mail and the pages: data
    # (values, the inbox's summary line), step titles and failures, decisions, zones.
    "approvals.words": "base",
    "approvals.activities": "base",  # the registry of activity functions
    "approvals.runtime": "runtime",
    "approvals.sql": "runtime",  # the database objects' .sql files and their reader
    "approvals.access": "access",
    "approvals.selectors": "selectors",
    "approvals.services": "services",
    "approvals.workers": "workers",
    # Front doors: how people and systems reach the app over HTTP.
    "approvals.api": "front",
    "approvals.pages": "front",  # the pages, one module per family; errors: 404/403/400/500
    "approvals.context_processors": "front",  # the navigation by role, for every page
    "approvals.admin": "front",  # the admin site, its models' pages and its own screens
    "approvals.views": "front",
    "approvals.http": "front",  # middleware, request ids, the client's address, lockout
    "approvals.web": "front",  # the pages' presentation: words, forms, the diagram
    # Audit: its table, the reads (export, verification, replay), the seal it writes,
    # and its doors.
    "approvals.audit": "base",  # the package's __init__
    "approvals.audit.models": "models",
    "approvals.audit.export": "selectors",
    "approvals.audit.keys": "base",  # the seal key, from the settings
    "approvals.audit.export_check": "services",  # an export against the database
    "approvals.audit.verify": "services",  # reads, and checks seals with seal.py
    "approvals.audit.replay": "selectors",
    "approvals.audit.seal": "services",
    "approvals.audit.daily_proof": "selectors",  # a day's heads, root and proofs
    "approvals.audit.daily_seal": "services",  # the daily seals written and checked
    "approvals.audit.override": "services",  # records an operator's override, signed
    "approvals.audit.retention": "services",  # retention, legal holds: what may leave
    "approvals.audit.archive": "services",  # the archiver: write, read back, drop
    "approvals.audit.archive_job": "services",  # the periodic job: every month due
    "approvals.audit.restore": "services",  # an archived month brought back
    "approvals.audit.archived": "selectors",  # archived workflows read in place
    "approvals.audit.archived_index": "services",  # the index written, and the tombstones
    "approvals.audit.object_lock": "services",  # the store's locks and legal holds set
    "approvals.audit.api": "front",
    "approvals.audit.admin": "front",
    "approvals.audit.pages": "front",  # the Verify page
    "approvals.audit.export_pages": "front",  # the auditor's Export page, a request's CSV
    "approvals.audit.export_words": "front",  # the export's sentences: the pages' words
    "approvals.audit.offline_verify": "base",  # standard library only: imports nothing
    # Notifications: the mail projection belongs to the command path (written in the
    # command's transaction); sending is a worker's; the link page is a front door.
    "approvals.notifications": "base",  # the package's __init__
    "approvals.notifications.models": "models",
    "approvals.notifications.format": "base",
    "approvals.notifications.bodies": "base",
    "approvals.notifications.metrics": "base",
    "approvals.notifications.links": "base",
    "approvals.notifications.messages": "runtime",
    "approvals.notifications.mail_words": "runtime",
    "approvals.notifications.confirm": "services",
    "approvals.notifications.sender": "workers",
    "approvals.notifications.digest": "workers",
    "approvals.notifications.tasks": "workers",
    "approvals.notifications.views": "front",
    "approvals.notifications.urls": "wiring",
    "approvals.notifications.apps": "wiring",
    "approvals.notifications.migrations": "wiring",
    # Wiring: puts the layers together.
    "approvals.urls": "wiring",
    "approvals.apps": "wiring",
    "approvals.checks": "wiring",
    "approvals.management": "wiring",
    "approvals.demo": "wiring",
    "approvals.migrations": "wiring",
}

# What each layer may import (besides itself, always allowed).
ALLOWED: dict[str, set[str]] = {
    "models": set(),
    "base": {"models"},
    "runtime": {"models", "base"},
    "access": {"models", "base"},
    "selectors": {"models", "base", "access", "runtime-reader"},
    "services": {"models", "base", "access", "runtime", "runtime-reader", "selectors"},
    "workers": {
        "models",
        "base",
        "access",
        "runtime",
        "runtime-reader",
        "selectors",
        "services",
    },
    # Front doors share the HTTP error envelope (api/errors.py) among themselves.
    "front": {"models", "base", "access", "runtime", "runtime-reader", "selectors", "services"},
    "wiring": {
        "models",
        "base",
        "access",
        "runtime",
        "runtime-reader",
        "selectors",
        "services",
        "workers",
        "front",
    },
}

# The runtime modules that only read or compute, which selectors may use; the rest
# of the runtime (commands, projections, dispatch) writes.
RUNTIME_READERS = {
    "approvals.runtime.archived",  # which workflows are archived; reads only
    "approvals.runtime.chain",
    "approvals.runtime.store",
    "approvals.runtime.directory",  # the directory the engine asks; reads only
    "approvals.runtime.rollup_buckets",  # the analytics rollup's bucket arithmetic
    "approvals.runtime.replica",  # where the reads of committed history go
    "approvals.runtime.tenant_scope",  # the tenant a transaction acts for; writes no row
}


def layer_of(module: str) -> str | None:
    if module in RUNTIME_READERS:
        return "runtime-reader"
    if module == "approvals":
        return LAYERS[module]
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        layer = LAYERS.get(".".join(parts[:end]))
        if layer is not None:
            return layer
    return None


def module_name(path: Path) -> tuple[str, bool]:
    """The dotted name of ``path`` and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imported_app_modules(source: str, module: str, is_package: bool) -> set[tuple[str, int]]:
    """The modules of ``approvals`` that ``source`` imports, anywhere in the file (in
    functions too), with the line of each import; relative imports resolved."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add((sub if _is_module(sub) else target, node.lineno))
    return {(name, line) for name, line in found if name.split(".")[0] == "approvals"}


@dataclass(frozen=True)
class Violation:
    module: str
    imports: str
    line: int

    def __str__(self) -> str:
        return f"{self.module} imports {self.imports} (line {self.line})"


def violations(source: str, module: str, is_package: bool = False) -> list[Violation]:
    own = layer_of(module)
    assert own is not None, f"{module} belongs to no layer: add it to LAYERS"
    allowed = ALLOWED["runtime" if own == "runtime-reader" else own] | {own}
    if own == "runtime":
        allowed |= {"runtime-reader"}
    bad = []
    for name, line in sorted(imported_app_modules(source, module, is_package)):
        target = layer_of(name)
        if target is None or target not in allowed:
            bad.append(Violation(module, name, line))
    return bad


SOURCES = sorted(PACKAGE.rglob("*.py"))


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_scan_sees_every_layer() -> None:
    names = {module_name(p)[0] for p in SOURCES}

    assert {
        "approvals.runtime.commands",
        "approvals.runtime.dispatch",
        "approvals.workers.tasks",
        "approvals.workers.jobs",
        "approvals.services.workflows",
        "approvals.selectors.workflows",
        "approvals.api.views",
        "approvals.pages",
        "approvals.pages.inbox",
        "approvals.admin",
        "approvals.admin.site",
        "approvals.http.middleware",
        "approvals.words.data",
        "approvals.models.workflows",
    } <= names


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_every_module_has_a_layer(path: Path) -> None:
    module, _ = module_name(path)

    assert layer_of(module) is not None, f"{module}: add it to LAYERS"


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_no_module_imports_upward(path: Path) -> None:
    module, is_package = module_name(path)

    assert [str(v) for v in violations(path.read_text(), module, is_package)] == []


@pytest.mark.parametrize(
    ("module", "source", "imports"),
    [
        # the circle the split removed: the command path calling the workers
        ("approvals.runtime.projections", "from ..workers.activities import x", "workers"),
        # lazily, inside a function, still counts
        (
            "approvals.runtime.commands",
            "def f():\n    from approvals.services import workflows\n",
            "services",
        ),
        ("approvals.models.workflows", "from ..access import may_read_workflow", "access"),
        ("approvals.models.workflows", "from approvals.runtime import commands", "runtime"),
        ("approvals.models.workflows", "from approvals.runtime import store", "runtime-reader"),
        ("approvals.selectors.tasks", "from ..runtime.commands import command_execute", "runtime"),
        ("approvals.selectors.tasks", "from ..services.workflows import x", "services"),
        ("approvals.services.workflows", "import approvals.workers.tasks", "workers"),
        ("approvals.services.workflows", "from ..api.serializers import X", "front"),
        ("approvals.workers.timers", "from .. import pages", "front"),
        ("approvals.runtime.commands", "from .. import access", "access"),
        ("approvals.clock", "from .runtime import commands", "runtime"),
        # the rooms: words/ is base, pages/, admin/ and http/ are front doors
        ("approvals.words.steps", "from ..pages import request", "front"),
        ("approvals.runtime.commands", "from ..http.request_ids import x", "front"),
        ("approvals.services.cron", "from ..admin.registry import x", "front"),
        ("approvals.words.data", "from ..services import cron", "services"),
    ],
)
def test_the_checker_catches_a_planted_upward_import(
    module: str, source: str, imports: str
) -> None:
    found = violations(source, module)

    assert len(found) == 1
    assert layer_of(found[0].imports) == imports


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("approvals.runtime.commands", "from . import store\nfrom .. import clock, metrics"),
        ("approvals.selectors.workflows", "def f():\n    from ..runtime.chain import event_hash"),
        ("approvals.workers.timers", "from ..runtime.commands import command_execute"),
        ("approvals.services.workflows", "from ..selectors.tasks import x\nfrom .. import access"),
        ("approvals.urls", "from . import pages, views\nfrom .api import urls"),
        ("approvals.apps", "from .workers.activities import attempt_dispatch"),
        ("approvals.runtime.projections", "from ..words.data import summary_line"),
        ("approvals.pages.inbox", "from .common import _member\nfrom ..http import request_ids"),
        ("approvals.admin.registry", "from ..services.cron import Cron"),
    ],
)
def test_the_checker_allows_downward_imports(module: str, source: str) -> None:
    assert violations(source, module) == []


def test_a_module_outside_every_layer_is_reported() -> None:
    with pytest.raises(AssertionError, match="belongs to no layer"):
        violations("", "approvals.somewhere_new")
