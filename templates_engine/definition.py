"""Workflow template definitions: JSON documents, parsed and validated once.

A definition is a key, an optional JSON Schema for the workflow data, and a list of
steps run in order (each may be skipped by its ``when`` condition)::

    {"key": "expense-approval", "title": "Expense",
     "schema": {"type": "object", "required": ["amountPaise"], ...},
     "steps": [{"id": "manager", "kind": "approval",
                "when": "data.amountPaise >= 100000",
                "approvers": [{"manager": "submitter"}], "deadline": "P2D"}, ...],
     "distinct_approvers": true}

``distinct_approvers`` (default false) turns on the four-eyes rule of
``templates_engine.segregation``. ``start_policy`` (``templates_engine.start_policy``)
says what a start does when a workflow for the same subject is running or finished.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # no stubs in requirements/test.in

from .data_schema import (
    CHECK_TOO_COSTLY,
    CheckTooCostly,
    closed,
    data_problems,
    data_validator,
    schema_problem,
)
from .errors import DefinitionError
from .expression_limits import largest_collection
from .start_policy import StartPolicy
from .state import SUBMITTER_STEP
from .steps import PARSERS, ActionStep, ApprovalStep, Step
from .summary import parse_summary

KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
_OPEN_DATA = "allow_undeclared_fields"  # opts out of closed data schemas (data_schema.py)
_START_POLICY = "start_policy"
# What a draft may still lack: the fields (or dependent fields) yet to be filled in.
_INCOMPLETE_IS_FINE = frozenset({"required", "dependentRequired"})
# Every top-level field of a definition: the one list ``parse`` checks against.
_TOP_FIELDS = {
    "key",
    "title",
    "description",
    "version",
    "schema",
    "steps",
    "distinct_approvers",
    "summary",
    _START_POLICY,
    _OPEN_DATA,
}


@dataclass(frozen=True)
class Definition:
    key: str
    title: str
    steps: tuple[Step, ...]
    schema: Mapping[str, Any] | None = None
    version: int = 1
    # Four eyes: one person may not approve two steps of the same workflow.
    distinct_approvers: bool = False
    start_policy: StartPolicy = field(default_factory=StartPolicy)
    # One line about a request (templates_engine.summary); None: the title and reference.
    summary: str | None = None
    _index: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)
    _titles: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    _validator: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, doc: object, *, version: int | None = None) -> Definition:
        """Validate ``doc`` and return the definition; raise DefinitionError naming the
        JSON path of the first problem."""
        if not isinstance(doc, Mapping):
            raise DefinitionError("$", "a workflow template definition must be a JSON object")
        unknown = sorted(set(doc) - _TOP_FIELDS)
        if unknown:
            raise DefinitionError(f"$.{unknown[0]}", "is not a definition field")
        key = doc.get("key")
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise DefinitionError("$.key", "must be lower-case letters, digits and dashes")
        title = doc.get("title", key)
        if not isinstance(title, str):
            raise DefinitionError("$.title", "must be a string")
        if version is None:
            version = doc.get("version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise DefinitionError("$.version", "must be a positive integer")
        schema = doc.get("schema")
        validator = None
        if schema is not None:
            if not isinstance(schema, Mapping):
                raise DefinitionError("$.schema", "must be a JSON Schema object")
            try:
                jsonschema.Draft202012Validator.check_schema(schema)
            except jsonschema.SchemaError as exc:
                raise DefinitionError(
                    "$.schema", f"is not a valid JSON Schema: {exc.message}"
                ) from exc
            if (unsafe := schema_problem(schema)) is not None:
                raise DefinitionError(*unsafe)
            open_ok = doc.get(_OPEN_DATA, False)
            if not isinstance(open_ok, bool):
                raise DefinitionError(f"$.{_OPEN_DATA}", "must be true or false")
            validator = data_validator(schema if open_ok else closed(schema))
        distinct_approvers = doc.get("distinct_approvers", False)
        if not isinstance(distinct_approvers, bool):
            raise DefinitionError("$.distinct_approvers", "must be true or false")
        start_policy = StartPolicy.parse(doc.get(_START_POLICY), f"$.{_START_POLICY}")
        summary = parse_summary(doc.get("summary"), schema)
        raw_steps = doc.get("steps")
        if not isinstance(raw_steps, list) or not raw_steps:
            raise DefinitionError("$.steps", "must be a non-empty list")
        steps: list[Step] = []
        index: dict[str, int] = {}
        titles: dict[str, str] = {}
        for i, raw in enumerate(raw_steps):
            path = f"$.steps[{i}]"
            if not isinstance(raw, Mapping):
                raise DefinitionError(path, "must be an object")
            kind = raw.get("kind")
            parser = PARSERS.get(kind) if isinstance(kind, str) else None
            if parser is None:
                raise DefinitionError(
                    f"{path}.kind", f"unknown step kind {kind!r}; one of {', '.join(PARSERS)}"
                )
            step = parser(raw, path)
            if step.id == SUBMITTER_STEP:
                raise DefinitionError(f"{path}.id", f"{SUBMITTER_STEP!r} is reserved")
            if step.id in index:
                raise DefinitionError(f"{path}.id", f"duplicate step id {step.id!r}")
            index[step.id] = i
            steps.append(step)
            if isinstance(raw.get("title"), str) and raw["title"].strip():
                titles[step.id] = raw["title"]
        for i, step in enumerate(steps):
            for name, target in step.references():
                path = f"$.steps[{i}].{name}"
                if target not in index:
                    raise DefinitionError(path, f"refers to step {target!r}, which does not exist")
                if index[target] >= i or not isinstance(steps[index[target]], ApprovalStep):
                    raise DefinitionError(path, f"{target!r} is not an earlier approval step")
            if isinstance(step, ApprovalStep) and step.send_back_to == "end":
                raise DefinitionError(
                    f"$.steps[{i}].send_back_to", "must be 'submitter' or an earlier step id"
                )
        return cls(
            key,
            title,
            tuple(steps),
            schema,
            version,
            distinct_approvers=distinct_approvers,
            start_policy=start_policy,
            summary=summary,
            _index=index,
            _titles=titles,
            _validator=validator,
        )

    def index(self, step_id: str) -> int:
        return self._index[step_id]

    def step_title(self, step_id: str) -> str:
        """The step's ``title`` as the definition gives it, else its id in words
        (``reserve_budget`` -> ``Reserve budget``): how people are told which step."""
        title = self._titles.get(step_id)
        if title is not None:
            return title
        words = re.sub(r"[_\-]+", " ", step_id).strip().lower()
        return words[:1].upper() + words[1:]

    def step(self, step_id: str) -> Step:
        return self.steps[self._index[step_id]]

    def action(self, step_id: str) -> ActionStep:
        step = self.step(step_id)
        assert isinstance(step, ActionStep), f"{step_id} is not an action step"
        return step

    def activities(self) -> set[str]:
        """Names of every activity the definition can run, undo ones included."""
        names: set[str] = set()
        for step in self.steps:
            if isinstance(step, ActionStep):
                names.add(step.run.activity)
                if step.compensate is not None:
                    names.add(step.compensate.activity)
        return names

    def data_errors(self, data: object) -> list[str]:
        """Problems with ``data`` against the definition's schema, as 'path: problem'."""
        if not isinstance(data, Mapping):
            return ["$: workflow data must be a JSON object"]
        if self._validator is not None:
            try:
                found = data_problems(self._validator, data)
            except CheckTooCostly:
                return [CHECK_TOO_COSTLY]
            errors = sorted(found, key=lambda e: list(e.absolute_path))
            if errors:
                return [f"{e.json_path}: {e.message}" for e in errors[:10]]
        return self._too_large_for_conditions(data)

    def draft_errors(self, data: object) -> list[str]:
        """``data_errors`` for a request not yet submitted: a value of the wrong type,
        past a limit or not declared is a problem; a field still missing is not (the
        draft is checked in full when it is submitted)."""
        if not isinstance(data, Mapping):
            return ["$: workflow data must be a JSON object"]
        if self._validator is None:
            return []
        try:
            found = data_problems(self._validator, data)
        except CheckTooCostly:
            return [CHECK_TOO_COSTLY]
        errors = [e for e in found if e.validator not in _INCOMPLETE_IS_FINE]
        errors.sort(key=lambda e: list(e.absolute_path))
        return [f"{e.json_path}: {e.message}" for e in errors[:10]]

    def _too_large_for_conditions(self, data: Mapping[str, Any]) -> list[str]:
        """Refused at start rather than failing a later step: lists too long for a
        condition that walks them (expression_limits)."""
        conditions = [c for s in self.steps for c in s.conditions() if c.walks]
        if not conditions:
            return []
        largest = largest_collection(data)
        return [f"$: {p}" for c in conditions if (p := c.too_costly(largest))][:1]
