"""The rule a request's department follows: a field its workflow template marks
``"x-list": "departments"`` names one of the departments its organisation keeps
(approvals.models.Department). An organisation that keeps none leaves the field free
text. Checked where every start passes (services.workflows), so the API, the start
form, a draft's submission and a schedule give the same answer in words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from templates_engine import CommandRejected, errors

from ..words.data import department_fields

NOT_A_DEPARTMENT = (
    '$.{field}: "{value}" is not one of the organisation\'s departments. Choose one of: {choices}.'
)


def department_problem(
    *,
    schema: Mapping[str, Any] | None,
    data: Mapping[str, Any],
    departments: Sequence[tuple[str, str]],
) -> str | None:
    """Why ``data`` names no kept department (None: it does, or no list is kept)."""
    if not departments:
        return None
    keys = {key for key, _ in departments}
    for name in department_fields(schema):
        value = data.get(name)
        if isinstance(value, str) and value and value not in keys:
            choices = ", ".join(f"{label} ({key})" for key, label in departments)
            return NOT_A_DEPARTMENT.format(field=name, value=value, choices=choices)
    return None


def department_check(
    *,
    schema: Mapping[str, Any] | None,
    data: Mapping[str, Any],
    departments: Sequence[tuple[str, str]],
) -> None:
    """Raise CommandRejected (INVALID_DATA) with ``department_problem``'s words."""
    problem = department_problem(schema=schema, data=data, departments=departments)
    if problem is not None:
        raise CommandRejected(errors.INVALID_DATA, problem)
