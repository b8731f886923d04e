"""What a start does when a workflow for the same subject (type and id) exists.

``{"while_running": "reject" | "use_existing" | "allow",
"after_finished": "allow" | "reject"}``, both optional (defaults ``reject`` and
``allow``). The engine only parses it; the store enforces it, since only the store
sees the other workflows of a subject.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import DefinitionError

REJECT = "reject"
USE_EXISTING = "use_existing"
ALLOW = "allow"

WHILE_RUNNING = (REJECT, USE_EXISTING, ALLOW)
AFTER_FINISHED = (ALLOW, REJECT)


@dataclass(frozen=True, slots=True)
class StartPolicy:
    """``while_running``: a start for a subject with a running workflow is refused
    (``reject``), answered with the running one (``use_existing``) or starts another
    (``allow``). ``after_finished``: a start for a subject whose workflows have all
    finished starts a new one (``allow``) or is refused (``reject``)."""

    while_running: str = REJECT
    after_finished: str = ALLOW

    @classmethod
    def parse(cls, doc: object, path: str) -> StartPolicy:
        if doc is None:
            return cls()
        if not isinstance(doc, Mapping):
            raise DefinitionError(path, "must be an object")
        unknown = sorted(set(doc) - {"while_running", "after_finished"})
        if unknown:
            raise DefinitionError(f"{path}.{unknown[0]}", "is not a start policy field")
        return cls(
            while_running=_choice(doc, "while_running", WHILE_RUNNING, REJECT, path),
            after_finished=_choice(doc, "after_finished", AFTER_FINISHED, ALLOW, path),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"while_running": self.while_running, "after_finished": self.after_finished}


def _choice(
    doc: Mapping[str, Any], name: str, allowed: tuple[str, ...], default: str, path: str
) -> str:
    value = doc.get(name, default)
    if not isinstance(value, str) or value not in allowed:
        raise DefinitionError(f"{path}.{name}", f"must be one of {', '.join(allowed)}")
    return value
