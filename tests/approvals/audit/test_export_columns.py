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
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

import approvals.audit.offline_verify as offline
from approvals.audit.export import ExportFilter, audit_export
from approvals.audit.seal import seal_create
from approvals.models import Tenant, User

from ..helpers import start_expense
from .support import run_expenses, verify

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


def test_verify_audit_export_fails_on_an_edited_csv_sentence(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    """The CSV's sentence is a reading aid, but a wrong one is caught: it must say what
    the app's words say of the hashed event."""
    run_expenses(api, 1)
    call_out = io.StringIO()
    call_command("export_audit", "--tenant", "acme", "--format", "csv", stdout=call_out)
    rows = list(csv.DictReader(io.StringIO(call_out.getvalue())))
    target = the_decision(rows)
    assert "Bob" in target["sentence"]
    target["sentence"] = "Alice approved the Manager step"
    path = tmp_path / "edited.csv"
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)

    out, ok = verify_export(path)

    assert not ok
    assert f"workflow {target['workflow_id']} seq {target['seq']}: column sentence says" in out


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


# -- every workflow a seal names is in the export, or its statement leaves it out ------


def export_lines(tenant: Tenant, **filters: Any) -> list[str]:
    return "".join(
        audit_export(tenant_id=tenant.pk, filters=ExportFilter(**filters), fmt="jsonl")
    ).splitlines()


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_deleting_every_line_of_a_sealed_workflow_fails_the_verifier(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    ids = run_expenses(api, 3)
    seal_create(tenant=acme)
    lines = [x for x in export_lines(acme) if ids[1] not in x or x.startswith('{"seal"')]

    report = offline.verify_export(str(write(tmp_path, lines)), seal_key=key(), jobs=1)

    assert not report.ok
    absent = [p for p in report.problems if p.workflow_id == ids[1]]
    assert absent and "not in the export" in absent[0].what
    # and the statement says the file lost events
    assert any("its statement says" in p.what for p in report.problems)


def test_a_filtered_export_lists_the_sealed_workflows_it_leaves_out(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    ids = run_expenses(api, 3)
    seal_create(tenant=acme)
    lines = export_lines(acme, subject="E-0")

    statement = json.loads(lines[-1])["export"]
    report = offline.verify_export(str(write(tmp_path, lines)), seal_key=key(), jobs=1)

    assert report.ok, report.summary()
    assert statement["left_out"] == sorted(ids[1:])
    assert statement["filters"] == {"subject": "E-0"}


def test_a_statement_edited_to_leave_a_workflow_out_fails(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    ids = run_expenses(api, 2)
    seal_create(tenant=acme)
    lines = [x for x in export_lines(acme) if ids[0] not in x or x.startswith('{"seal"')]
    forged = json.loads(lines[-1])
    forged["export"]["left_out"] = [ids[0]]
    lines[-1] = json.dumps(forged)

    report = offline.verify_export(str(write(tmp_path, lines)), seal_key=key(), jobs=1)

    assert offline.STATEMENT_BAD_SIGNATURE in [p.what for p in report.problems]


def test_a_sealed_export_without_its_statement_fails(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    run_expenses(api, 1)
    seal_create(tenant=acme)
    lines = export_lines(acme)[:-1]

    report = offline.verify_export(str(write(tmp_path, lines)), seal_key=key(), jobs=1)

    assert [p.what for p in report.problems] == [offline.STATEMENT_MISSING]


def key() -> bytes:
    return settings.APPROVALS_AUDIT_SEAL_KEY.encode()


# -- names are sealed ---------------------------------------------------------------------


def swap_usernames(a: str, b: str) -> None:
    """As the database superuser: two users' usernames swapped, nothing else."""
    with connection.cursor() as c:
        c.execute("UPDATE approvals_user SET username = 'swap-held' WHERE username = %s", [a])
        c.execute("UPDATE approvals_user SET username = %s WHERE username = %s", [a, b])
        c.execute("UPDATE approvals_user SET username = %s WHERE username = 'swap-held'", [b])


def test_swapped_usernames_are_reported_and_the_export_keeps_the_recorded_names(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    # given bob's approval and victor's own request, then the two usernames swapped
    run_expenses(api, 1)
    assert start_expense(api("victor"), 4_500_000, subject="V-1").status_code == 201
    bob_id = User.objects.get(username="bob").pk
    swap_usernames("bob", "victor")

    out, ok = verify()

    assert not ok
    assert f"user #{bob_id}, is now 'victor', but its events recorded the username 'bob'" in out
    assert "is now 'bob', but its events recorded the username 'victor'" in out
    rows = [json.loads(x) for x in export_lines(acme)]
    decision = the_decision(rows)
    assert (decision["actor"], decision["actor_id"]) == ("bob", bob_id)
    assert offline.verify_export(str(write(tmp_path, export_lines(acme))), jobs=1).ok
    with pytest.raises(CommandError):  # nor does a rebuild go ahead over it
        call_command("rebuild_read_models", stdout=io.StringIO())


def test_a_renamed_actor_whose_later_events_record_the_new_name_verifies(
    acme: Tenant, api: Any
) -> None:
    run_expenses(api, 1, prefix="A")
    User.objects.filter(username="bob").update(username="robert")
    run_expenses(api_as_robert(api), 1, prefix="B")

    out, ok = verify()

    assert ok, out


def api_as_robert(api: Any) -> Any:
    def make(name: str) -> Any:
        return api("robert" if name == "bob" else name)

    return make


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "not an export that can be read"),
        ("not,an,export\r\n1,2,3\r\n", "the CSV's header is not an export's"),
        ('{"workflow_id": "x"}\n', "not an event or a seal of the export"),
    ],
)
def test_verify_audit_export_refuses_what_is_not_an_export_in_words(
    acme: Tenant, tmp_path: Path, content: str | None, said: str
) -> None:
    path = tmp_path / "file"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    out = io.StringIO()

    with pytest.raises(CommandError) as raised:
        call_command("verify_audit", "--export", str(path), stdout=out)

    assert said in out.getvalue() + str(raised.value)
