"""Routing conditions in CEL (Common Expression Language), never Python ``eval``.

A condition sees ``data`` (the workflow data) and ``submitter`` (a user id). It is
compiled once, when the definition is parsed, so a typo is a DefinitionError and not
a surprise at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import celpy

from .errors import DefinitionError

_ENV = celpy.Environment()


class ConditionError(Exception):
    """A condition that failed at run time (a missing field, a type mismatch)."""


class Condition:
    """A compiled CEL boolean expression."""

    __slots__ = ("source", "_program")

    def __init__(self, source: str, path: str) -> None:
        if not isinstance(source, str) or not source.strip():
            raise DefinitionError(path, "must be a non-empty CEL expression")
        try:
            ast = _ENV.compile(source)
            self._program = _ENV.program(ast)
        except Exception as exc:  # celpy raises several parser error types
            text = str(exc).strip()
            first_line = text.splitlines()[0] if text else type(exc).__name__
            raise DefinitionError(path, f"condition does not compile: {first_line}") from exc
        self.source = source

    def evaluate(self, data: Mapping[str, Any], submitter: str | None) -> bool:
        """Evaluate against the workflow data; raise ConditionError if it cannot."""
        activation = {
            "data": celpy.json_to_cel(dict(data)),
            "submitter": celpy.celtypes.StringType(submitter or ""),
        }
        try:
            result = self._program.evaluate(activation)
        except Exception as exc:
            raise ConditionError(f"{self.source!r}: {exc.args[0] if exc.args else exc}") from exc
        if not isinstance(result, celpy.celtypes.BoolType):
            raise ConditionError(f"{self.source!r} gave {type(result).__name__}, not a bool")
        return bool(result)

    def __repr__(self) -> str:
        return f"Condition({self.source!r})"
