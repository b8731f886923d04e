"""The JSON Lines export carries what an outside check needs (every column an event's
hash covers, the seals, the status after each event), and the standalone verifier
(``python -m approvals.audit.offline_verify``, standard library only) agrees with
``verify_audit`` on an exported file, untouched and tampered."""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

import approvals.audit.offline_verify as offline
from approvals.audit.export import JSONL_FIELDS, SEAL_FIELDS, ExportFilter, audit_export
from approvals.audit.seal import seal_create
from approvals.audit.verify import audit_verify
from approvals.models import Tenant, Workflow, WorkflowEvent
from approvals.runtime.chain import HASH_V1

from ..helpers import decide, start_expense
from .support import bulk_history, rechain, run_expenses, triggers_off

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]


def export_file(tmp_path: Path, tenant: Tenant, **filters: Any) -> Path:
    path = tmp_path / "export.jsonl"
    text = "".join(audit_export(tenant_id=tenant.pk, filters=ExportFilter(**filters), fmt="jsonl"))
    path.write_text(text, encoding="utf-8")
    return path


def found_offline(path: Path, key: bytes | None = None) -> set[tuple[str | None, int | None]]:
    report = offline.verify_export(str(path), seal_key=key)
    return {(p.workflow_id, p.seq) for p in report.problems}


def found_in_database(tenant: Tenant) -> set[tuple[str | None, int | None]]:
    breaks, _ = audit_verify(tenant=tenant)
    return {(b.workflow_id, b.seq) for b in breaks}


def edit_payload(workflow_id: str, seq: int) -> None:
    """Change an event's comment as a database superuser would, hashes left alone."""
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "edited"}\' '
            "WHERE workflow_id = %s AND seq = %s",
            [workflow_id, seq],
        )


def seal_key() -> bytes:
    return settings.APPROVALS_AUDIT_SEAL_KEY.encode()


def test_jsonl_rows_carry_every_column_the_hash_covers_and_the_seals(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    run_expenses(api, 2)
    seal_create(tenant=acme)

    lines = [json.loads(x) for x in export_file(tmp_path, acme).read_text().splitlines()]

    events = [x for x in lines if "seq" in x]
    seals = [x["seal"] for x in lines if "seal" in x]
    assert set(lines[-1]) == {"export"}  # the export's statement comes last
    assert len(events) == WorkflowEvent.objects.filter(tenant=acme).count()
    assert all(set(e) == set(JSONL_FIELDS) for e in events)
    assert len(seals) == 1 and set(seals[0]) == set(SEAL_FIELDS)
    stored = WorkflowEvent.objects.get(workflow_id=events[0]["workflow_id"], seq=events[0]["seq"])
    assert events[0]["payload"] == stored.payload
    assert events[0]["created_at"] == stored.created_at.isoformat()
    assert events[0]["created_at"].endswith("+00:00")  # the time carries its offset
    assert all(offline.event_hash(e) == e["hash"] for e in events)


def test_export_status_is_the_status_after_each_event(acme: Tenant, api: Any) -> None:
    # given an expense approved by bob, now waiting for finance
    wid = start_expense(api("alice"), 4_500_000, subject="S-1").json()["workflowId"]
    assert decide(api("bob"), wid, "approve", "s-bob").status_code == 200
    now = Workflow.objects.get(pk=wid).public_status

    rows = [
        row
        for line in audit_export(tenant_id=acme.pk, filters=ExportFilter(), fmt="jsonl")
        if "seq" in (row := json.loads(line))
    ]

    statuses = [r["status"] for r in sorted(rows, key=lambda r: r["seq"])]
    assert statuses[-1] == now != "PENDING_MANAGER"
    assert "PENDING_MANAGER" in statuses  # before bob's decision it waited for him
    first_decision = next(r for r in rows if r["type"] == "DecisionRecorded")
    before = [r["status"] for r in rows if r["seq"] < first_decision["seq"]]
    assert before[-1] == "PENDING_MANAGER"
    # and the same in the CSV, and on a page of the API met part-way through a history
    text = "".join(audit_export(tenant_id=acme.pk, filters=ExportFilter(), fmt="csv"))
    csv_rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["status"] for r in csv_rows] == [r["status"] for r in rows]
    later = ExportFilter(since=first_decision_time(rows))
    partial = [
        row
        for x in audit_export(tenant_id=acme.pk, filters=later, fmt="jsonl")
        if "seq" in (row := json.loads(x))
    ]
    assert partial[-1]["status"] == now
    assert partial[0]["workflow_version"] is None  # a part of a history: no head to check


def first_decision_time(rows: list[dict[str, Any]]) -> Any:
    import datetime as dt

    first = next(r for r in rows if r["type"] == "DecisionRecorded")
    return dt.datetime.fromisoformat(first["created_at"])


def test_offline_verifier_agrees_on_an_untouched_export(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    run_expenses(api, 3)
    bulk_history(acme, workflows=2, events_each=5, hash_format=HASH_V1)  # older events too
    seal_create(tenant=acme)
    path = export_file(tmp_path, acme)

    report = offline.verify_export(str(path), seal_key=seal_key())

    assert report.ok, report.problems
    assert found_in_database(acme) == set()
    assert report.events == WorkflowEvent.objects.filter(tenant=acme).count()
    assert report.seals == 1 and report.seals_checked


def test_offline_verifier_agrees_on_an_edited_event(acme: Tenant, api: Any, tmp_path: Path) -> None:
    ids = run_expenses(api, 3)
    seal_create(tenant=acme)
    edit_payload(ids[1], 2)
    path = export_file(tmp_path, acme)

    offline_found = found_offline(path, seal_key())

    assert offline_found == found_in_database(acme) == {(ids[1], 2)}


def test_offline_verifier_agrees_on_a_rewritten_sealed_history_and_a_deleted_tail(
    acme: Tenant, api: Any, tmp_path: Path
) -> None:
    # given a sealed history rewritten with every hash recomputed, and another's tail gone
    ids = run_expenses(api, 3)
    seal_create(tenant=acme)
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "x"}\' '
            "WHERE workflow_id = %s AND seq = 2",
            [ids[0]],
        )
        c.execute(
            "DELETE FROM approvals_workflowevent WHERE workflow_id = %s AND seq > 3", [ids[2]]
        )
    rechain(ids[0])
    path = export_file(tmp_path, acme)

    offline_found = found_offline(path, seal_key())

    in_database = found_in_database(acme)
    assert {wid for wid, _ in offline_found} == {ids[0], ids[2]}
    assert offline_found == in_database
    # without the key the rewritten chain looks whole: only the seal tells
    assert {wid for wid, _ in found_offline(path)} == {ids[2]}


def test_offline_verifier_finds_a_forged_seal(acme: Tenant, api: Any, tmp_path: Path) -> None:
    run_expenses(api, 1)
    seal_create(tenant=acme)
    path = export_file(tmp_path, acme)
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('{"seal"'))
    forged = json.loads(lines[at])
    forged["seal"]["count"] += 1
    lines[at] = json.dumps(forged)
    path.write_text("\n".join(lines) + "\n")

    report = offline.verify_export(str(path), seal_key=seal_key())

    assert [p.what for p in report.problems] == [
        offline.SEAL_BAD_SIGNATURE.format(seal=offline._seal_name(forged["seal"]))
    ]
    wrong = offline.verify_export(str(path), seal_key=b"another key")
    assert "signed with another key" in wrong.problems[0].what


def test_offline_verifier_runs_without_django(acme: Tenant, api: Any, tmp_path: Path) -> None:
    # given an export with one edited event, checked in a fresh interpreter that has no
    # Django settings and ignores the environment's paths (-I), from the repository
    ids = run_expenses(api, 2)
    edit_payload(ids[0], 3)
    path = export_file(tmp_path, acme)
    env = {"PATH": os.environ.get("PATH", "")}

    isolated = subprocess.run(
        [sys.executable, "-I", "-c", CHECK_WITHOUT_DJANGO, str(ROOT), str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    as_a_module = subprocess.run(
        [sys.executable, "-m", "approvals.audit.offline_verify", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    for done in (isolated, as_a_module):
        assert done.returncode == 1, done.stderr
        assert f"BROKEN workflow {ids[0]} seq 3: {offline.EDITED}" in done.stdout
    assert "no django module was imported" in isolated.stdout


# Runs the verifier, then says whether anything of Django (or the app's settings) was
# imported on the way.
CHECK_WITHOUT_DJANGO = """
import sys
sys.path.insert(0, sys.argv[1])
from approvals.audit import offline_verify
code = offline_verify.main([sys.argv[2]])
loaded = [m for m in sys.modules if m.split(".")[0] in ("django", "rest_framework", "config")]
print("imported: " + ", ".join(loaded) if loaded else "no django module was imported")
sys.exit(code)
"""


def test_offline_verifier_imports_only_the_standard_library() -> None:
    source = Path(offline.__file__).read_text()
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports: nothing of the app"
            imported.add((node.module or "").split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def test_offline_verifier_command_line(acme: Tenant, api: Any, tmp_path: Path) -> None:
    run_expenses(api, 1)
    out = io.StringIO()
    call_command("export_audit", "--tenant", "acme", "--format", "jsonl", stdout=out)
    path = tmp_path / "e.jsonl"
    path.write_text(out.getvalue())
    printed = io.StringIO()

    code = offline.main([str(path), "--seal-key", seal_key().decode()], out=printed)

    assert code == 0
    assert printed.getvalue().startswith("OK: ")


def test_offline_verifier_hashes_in_several_processes_alike(
    acme: Tenant, api: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given an export cut into many small pieces, one event edited and one line garbled
    ids = run_expenses(api, 3)
    edit_payload(ids[2], 4)
    path = export_file(tmp_path, acme)
    lines = path.read_text().splitlines()
    lines.insert(5, '{"workflow_id": "cut short')
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(offline, "_RANGE_BYTES", 900)
    assert len(offline._ranges(str(path), 900, ())) > 5

    alone = offline.verify_export(str(path), jobs=1)
    together = offline.verify_export(str(path), jobs=2)

    assert alone.problems == together.problems
    assert [(p.workflow_id, p.seq) for p in alone.problems] == [(None, None), (ids[2], 4)]
    assert "line 6 is not an event" in alone.problems[0].what
    assert alone.events == together.events == len(lines) - 2  # the garbled line, the statement
