"""What every step kind shares: its id, its optional ``when`` condition, and the
hooks the decider calls."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import CommandRejected, DefinitionError
from ..expressions import Condition

if TYPE_CHECKING:
    from ..builder import Builder
    from ..commands import Command

STEP_ID = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


@dataclass(frozen=True)
class Step:
    id: str
    when: Condition | None

    kind = "step"

    def enter(self, b: Builder) -> None:
        """Begin the step: emit the events that assign, schedule or wait."""
        raise NotImplementedError

    def on_command(self, b: Builder, command: Command) -> None:
        """Handle a command aimed at this step while it is current."""
        raise CommandRejected("INVALID_COMMAND", f"step {self.id!r} does not take {command.type}")

    def on_timer(self, b: Builder, kind: str, key: str) -> None:
        """Handle one of this step's own timers firing."""

    def references(self) -> list[tuple[str, str]]:
        """(json path, step id) pairs this step refers to, for validation."""
        return []

    def conditions(self) -> list[Condition]:
        """Every condition the step evaluates on the data: its ``when`` and any of its
        own (an approver's)."""
        return [self.when] if self.when is not None else []


def check_fields(doc: Mapping[str, Any], path: str, allowed: set[str]) -> None:
    unknown = sorted(set(doc) - allowed - {"id", "kind", "when", "title", "failure_text"})
    if unknown:
        raise DefinitionError(f"{path}.{unknown[0]}", "is not a field of this step kind")
    # What people are told when the step fails for good (the app shows it in place of
    # the error): a sentence of the workflow template's own.
    failure = doc.get("failure_text")
    if failure is not None and (not isinstance(failure, str) or not failure.strip()):
        raise DefinitionError(f"{path}.failure_text", "must be a non-empty sentence")


def common(doc: Mapping[str, Any], path: str) -> tuple[str, Condition | None]:
    step_id = doc.get("id")
    if not isinstance(step_id, str) or not STEP_ID.fullmatch(step_id):
        raise DefinitionError(
            f"{path}.id", "must be lower-case letters, digits and _ (starting with a letter)"
        )
    when = doc.get("when")
    return step_id, None if when is None else Condition(when, f"{path}.when")


def require_str(doc: Mapping[str, Any], name: str, path: str) -> str:
    value = doc.get(name)
    if not isinstance(value, str) or not value:
        raise DefinitionError(f"{path}.{name}", "is required and must be a non-empty string")
    return value
