"""``verify_audit --export FILE``: is every column of an export (JSON Lines or CSV)
exactly what the database's hashed event says? A JSON Lines export is checked as the
offline verifier checks it (every hash recomputed, every column derived again from
what the hash covers, the seals and the export's own statement), and each event's hash
must be the database's. A CSV carries no hashed content of its own: each row must be
the row the export writes for the database's event of that workflow and seq, whose
chain the rest of ``verify_audit`` checks."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from typing import Any

from ..models import Tenant, WorkflowEvent
from . import offline_verify
from .export import CSV_COLUMNS, Sentences, _record, _rows, csv_cell
from .keys import SealKeyMissing, seal_key

NOT_IN_DATABASE = "not in the database (no such event of this organisation)"
NOT_THE_DATABASES = "its hash is not the database's event's"
NOT_A_CSV_EXPORT = "the CSV's header is not an export's ({header})"
# Rows looked up in the database per query.
_BATCH = 1000


def export_problems(
    path: str, *, tenant: Tenant | None, sentences: Sentences | None = None
) -> Iterator[str]:
    """Every problem of the export at ``path``, one line each. ``sentences``: the words
    a CSV's ``sentence`` column must say of each event (the export's own)."""
    with open(path, encoding="utf-8", newline="") as f:
        jsonl = f.read(1) == "{"
    if jsonl:
        yield from _jsonl_problems(path, tenant)
    else:
        yield from _csv_problems(path, tenant, sentences)


def _jsonl_problems(path: str, tenant: Tenant | None) -> Iterator[str]:
    try:
        key: bytes | None = seal_key()
    except SealKeyMissing:
        key = None
    report = offline_verify.verify_export(path, seal_key=key, jobs=1)
    yield from (str(p) for p in report.problems)
    hashes: dict[tuple[str, int], str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line) if line.strip() else None
            if isinstance(row, dict) and "workflow_id" in row and "seq" in row:
                hashes[(str(row["workflow_id"]), int(row["seq"]))] = str(row["hash"])
    for where, stored in _stored(list(hashes), tenant):
        if stored is None:
            yield f"{_where(where)}: {NOT_IN_DATABASE}"
        elif stored["hash"] != hashes[where]:
            yield f"{_where(where)}: {NOT_THE_DATABASES}"


def _csv_problems(path: str, tenant: Tenant | None, sentences: Sentences | None) -> Iterator[str]:
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        if tuple(header) != CSV_COLUMNS:
            yield NOT_A_CSV_EXPORT.format(header=",".join(header)[:200])
            return
        cells = {(r[0], int(r[1])): r for r in reader if len(r) == len(CSV_COLUMNS)}
    for where, stored in _stored(list(cells), tenant):
        if stored is None:
            yield f"{_where(where)}: {NOT_IN_DATABASE}"
            continue
        if sentences is not None:
            stored["sentence"] = sentences(stored)
        for column, cell in zip(CSV_COLUMNS, cells[where], strict=True):
            if column == "sentence" and not cell:
                continue  # written without the words (an empty cell claims nothing)
            value = stored.get(column)
            want = "" if value is None else str(csv_cell(value))
            if cell != want:
                differs = offline_verify.COLUMN_DIFFERS.format(
                    column=column, shown=json.dumps(cell), hashed=json.dumps(want)
                )
                yield f"{_where(where)}: {differs}"


def _stored(
    wanted: list[tuple[str, int]], tenant: Tenant | None
) -> Iterator[tuple[tuple[str, int], dict[str, Any] | None]]:
    """Each (workflow, seq) with the database's export row of that event, or None."""
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        qs = WorkflowEvent.objects.filter(workflow_id__in={w for w, _ in batch})
        if tenant is not None:
            qs = qs.filter(tenant=tenant)
        rows = {}
        for values in _rows(qs.order_by()):
            row = _record(values, True)
            rows[(row["workflow_id"], row["seq"])] = row
        for where in batch:
            yield where, rows.get(where)


def _where(where: tuple[str, int]) -> str:
    return f"workflow {where[0]} seq {where[1]}"
