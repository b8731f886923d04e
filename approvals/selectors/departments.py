"""The departments an organisation keeps (approvals.models.Department), as the start
form offers them and as a start checks a request's department against them. A start
reads them in its first round trip, with the subject's workflows
(``DEPARTMENTS_JSON_SQL``), so the check costs no statement of its own."""

from __future__ import annotations

import json
from typing import Any

from ..models import Department
from ..runtime import store
from ..words.data import DEPARTMENTS, KeptLists

# The organisation's departments as a JSON list of [key, name] pairs in name order (one
# parameter: the tenant's id); [] when it keeps none.
DEPARTMENTS_JSON_SQL = (
    "(SELECT COALESCE(json_agg(json_build_array(d.key, d.name) ORDER BY lower(d.name)),"
    f" '[]'::json) FROM {store.table(Department)} d WHERE d.tenant_id = %s)"
)


def department_choices(*, tenant_id: int) -> list[tuple[str, str]]:
    """The organisation's departments as (key, name) pairs, in name order."""
    rows = Department.objects.filter(tenant_id=tenant_id).values_list("key", "name")
    return sorted(((k, n) for k, n in rows), key=lambda row: row[1].lower())


def kept_lists(*, tenant_id: int | None) -> KeptLists:
    """The organisation's kept lists, for showing a field's key by its entry's name
    (``words.data.format_value``); one query."""
    if tenant_id is None:
        return {}
    return lists_of(department_choices(tenant_id=tenant_id))


def lists_of(departments: list[tuple[str, str]]) -> KeptLists:
    """``kept_lists`` from departments already read (``department_choices``)."""
    return {DEPARTMENTS: dict(departments)}


def departments_rows(value: Any) -> list[tuple[str, str]]:
    """``DEPARTMENTS_JSON_SQL``'s column as (key, name) pairs."""
    if isinstance(value, str | bytes):
        value = json.loads(value)
    return [(str(k), str(n)) for k, n in value or []]
