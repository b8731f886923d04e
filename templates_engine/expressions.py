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
from .expression_limits import (
    MAX_ESTIMATED_STEPS,
    TOO_COSTLY,
    check_source,
    check_tree,
    largest_collection,
)

# Transpiled to Python once per condition: evaluating costs a third of interpreting the
# parse tree on every decision.
_ENV = celpy.Environment(runner_class=celpy.CompiledRunner)


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
INT_OUT_OF_RANGE = "integer outside the signed 64-bit range the routing rules evaluate"


class ConditionError(Exception):
    """A condition that failed at run time (a missing field, a type mismatch)."""


class DataNotEvaluable(ConditionError):
    """The workflow data itself cannot be given to CEL (an integer past 64 bits): a
    problem of the input, not of the definition."""


class DataTooLarge(DataNotEvaluable):
    """The workflow data holds lists or maps too long for a condition that walks them
    (``expression_limits``): evaluating it would hold the server for too long."""


class _Names(dict[str, Any]):
    """The names a condition sees, with the size of the longest list or map in the
    data (measured once, when a condition that walks lists first asks)."""

    largest: int | None = None


def data_problems(data: object) -> list[str]:
    """Values CEL cannot hold, as 'path: problem' (iterative: data may be deep)."""
    problems: list[str] = []
    stack: list[tuple[str, object]] = [("$", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            problems.append(f"{path}: {INT_OUT_OF_RANGE}")
        elif isinstance(value, Mapping):
            stack.extend((f"{path}.{k}", v) for k, v in value.items())
        elif isinstance(value, list | tuple):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
    return sorted(problems)


def _is_name(value: object) -> bool:
    return getattr(value, "type", None) == "IDENT"


class Condition:
    """A compiled CEL boolean expression."""

    __slots__ = ("source", "_ast", "_program", "_cost")

    def __init__(self, source: str, path: str) -> None:
        if not isinstance(source, str) or not source.strip():
            raise DefinitionError(path, "must be a non-empty CEL expression")
        check_source(source, path)
        try:
            self._ast = _ENV.compile(source)
        except RecursionError as exc:
            raise DefinitionError(path, "condition is too deeply nested to read") from exc
        except Exception as exc:  # celpy raises several parser error types
            text = str(exc).strip()
            first_line = text.splitlines()[0] if text else type(exc).__name__
            raise DefinitionError(path, f"condition does not compile: {first_line}") from exc
        # The program is Python transpiled from the tree: a name that Python keeps for
        # itself (``__class__``) would reach the evaluator's own objects.
        if hidden := sorted(
            {str(t) for t in self._ast.scan_values(_is_name) if str(t).startswith("__")}
        ):
            raise DefinitionError(path, f"condition uses a name CEL does not offer: {hidden[0]}")
        self._cost = check_tree(self._ast, path)
        try:
            self._program = _ENV.program(self._ast)
        except (RecursionError, SyntaxError, MemoryError) as exc:
            raise DefinitionError(path, "condition is too deeply nested to read") from exc
        self.source = source

    def evaluate(self, data: Mapping[str, Any], submitter: str | None) -> bool:
        """Evaluate against the workflow data; raise ConditionError if it cannot, and
        DataNotEvaluable if the data has values CEL cannot hold."""
        return self.evaluate_in(self.activation(data, submitter))

    def activation(self, data: Mapping[str, Any], submitter: str | None) -> dict[str, Any]:
        """The names a condition sees, in CEL's types: converted once, they serve every
        condition evaluated on the same data. Raises DataNotEvaluable."""
        try:
            cel_data = celpy.json_to_cel(dict(data))
        except (ValueError, OverflowError, TypeError) as exc:
            problems = "; ".join(data_problems(data)) or str(exc)
            raise DataNotEvaluable(f"{self.source!r}: {problems}") from exc
        names = _Names(data=cel_data, submitter=celpy.celtypes.StringType(submitter or ""))
        return names

    def evaluate_in(self, activation: dict[str, Any]) -> bool:
        """Evaluate with names from ``activation``; raise ConditionError if it cannot,
        and DataTooLarge before starting when the data would make it too costly."""
        if self._cost.walks:
            self._check_cost(activation)
        try:
            result = self._program.evaluate(activation)
        except Exception as exc:
            raise ConditionError(f"{self.source!r}: {self._why(activation, exc)}") from exc
        if not isinstance(result, celpy.celtypes.BoolType):
            raise ConditionError(f"{self.source!r} gave {type(result).__name__}, not a bool")
        return bool(result)

    @property
    def walks(self) -> bool:
        """Whether the condition walks lists or maps (its cost grows with the data)."""
        return self._cost.walks

    def too_costly(self, largest: int) -> str | None:
        """Why data whose longest list or map has ``largest`` items is too much for this
        condition, or None (see ``expression_limits``)."""
        if self._cost.walks and self._cost.estimate(largest) > MAX_ESTIMATED_STEPS:
            return TOO_COSTLY.format(largest=largest, source=self.source)
        return None

    def _check_cost(self, activation: dict[str, Any]) -> None:
        largest = getattr(activation, "largest", None)
        if largest is None:
            largest = largest_collection(activation.get("data"))
            if isinstance(activation, _Names):
                activation.largest = largest
        if problem := self.too_costly(largest):
            raise DataTooLarge(problem)

    def _why(self, activation: dict[str, Any], exc: Exception) -> object:
        """What went wrong, in the words of CEL's interpreter: the transpiled program
        says only "evaluation error". Failures are rare; walking the tree again is fine."""
        try:
            celpy.InterpretedRunner(_ENV, self._ast).evaluate(activation)
        except Exception as precise:
            exc = precise
        return exc.args[0] if exc.args else exc

    def __repr__(self) -> str:
        return f"Condition({self.source!r})"
