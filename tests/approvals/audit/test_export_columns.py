"""Every column of an export is what its hashed event says: the offline verifier and
``verify_audit --export`` derive each one again from what the hash covers and name the
event and the column that differ."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

import approvals.audit.offline_verify as offline
from approvals.audit.export import ExportFilter, audit_export
from approvals.models import Tenant

from .support import run_expenses

pytestmark = pytest.mark.django_db

# A readable column, and a value no event of run_expenses holds there.
EDITS = [
    ("actor", "alice"),
    ("decision", "reject"),
    ("comment", "approved by phone"),
    ("time", "2020-01-01T00:00:00.000000Z"),
    ("status", "REJECTED"),
]


def exported(tenant: Tenant, fmt: str) -> str:
    return "".join(audit_export(tenant_id=tenant.pk, filters=ExportFilter(), fmt=fmt))


def the_decision(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in rows if r.get("type") == "DecisionRecorded")


def edited_jsonl(tmp_path: Path, tenant: Tenant, column: str, value: str) -> tuple[Path, dict]:
    rows = [json.loads(line) for line in exported(tenant, "jsonl").splitlines()]
    target = the_decision(rows)
    assert target[column] != value
    target[column] = value
    path = tmp_path / "edited.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path, target


def verify_export(path: Path) -> tuple[str, bool]:
    out = io.StringIO()
    try:
        call_command("verify_audit", "--export", str(path), stdout=out)
    except CommandError:
        return out.getvalue(), False
    return out.getvalue(), True


@pytest.mark.parametrize(("column", "value"), EDITS)
def test_offline_verifier_fails_on_an_edited_column_and_names_it(
    acme: Tenant, api: Any, tmp_path: Path, column: str, value: str
) -> None:
    run_expenses(api, 1)
    path, target = edited_jsonl(tmp_path, acme, column, value)

    report = offline.verify_export(str(path), jobs=1)

    assert not report.ok
    named = [p for p in report.problems if f"column {column} says" in p.what]
    assert [(p.workflow_id, p.seq) for p in named] == [(target["workflow_id"], target["seq"])]
    assert json.dumps(value) in named[0].what


@pytest.mark.parametrize(("column", "value"), EDITS)
def test_verify_audit_export_fails_on_an_edited_jsonl_column(
    acme: Tenant, api: Any, tmp_path: Path, column: str, value: str
) -> None:
    run_expenses(api, 1)
    path, target = edited_jsonl(tmp_path, acme, column, value)

    out, ok = verify_export(path)

    assert not ok
    assert f"workflow {target['workflow_id']} seq {target['seq']}: column {column} says" in out


@pytest.mark.parametrize(("column", "value"), EDITS)
def test_verify_audit_export_fails_on_an_edited_csv_column(
    acme: Tenant, api: Any, tmp_path: Path, column: str, value: str
) -> None:
    run_expenses(api, 1)
    rows = list(csv.DictReader(io.StringIO(exported(acme, "csv"))))
    target = the_decision(rows)
    target[column] = value
    path = tmp_path / "edited.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)

    out, ok = verify_export(path)

    assert not ok
    assert f"workflow {target['workflow_id']} seq {target['seq']}: column {column} says" in out


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_verify_audit_export_passes_an_untouched_export(
    acme: Tenant, api: Any, tmp_path: Path, fmt: str
) -> None:
    run_expenses(api, 2)
    path = tmp_path / f"export.{fmt}"
    path.write_text(exported(acme, fmt), encoding="utf-8", newline="")

    out, ok = verify_export(path)

    assert ok, out
    assert "every column of" in out


def test_a_column_no_hash_covers_fails_the_offline_verifier(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    run_expenses(api, 1)
    rows = [json.loads(line) for line in exported(acme, "jsonl").splitlines()]
    rows[0]["approved_by_cfo"] = True
    path = tmp_path / "added.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    report = offline.verify_export(str(path), jobs=1)

    assert any("column approved_by_cfo is not derived" in p.what for p in report.problems)


def test_every_exported_column_is_hashed_or_derived_from_it() -> None:
    from approvals.audit.export import JSONL_FIELDS

    derived = {*offline.HASHED_COLUMNS, *offline.SHOWN_COLUMNS, *offline.HEAD_COLUMNS}
    assert set(JSONL_FIELDS) == derived
