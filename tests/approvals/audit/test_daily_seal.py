"""Daily seals: one row per organisation per UTC day over every workflow's chain head,
each workflow checkable against its day's root with an audit path (the live check, the
export of one workflow, the offline verifier), the days chained, sealing idempotent
and one row when two sealers race."""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection

from approvals import clock
from approvals.audit import offline_verify
from approvals.audit.archive import (
    archive_check,
    archive_names,
    manifest_signature,
    month_archive,
)
from approvals.audit.daily_proof import day_end, day_leaves, day_root, inclusion_proof
from approvals.audit.daily_seal import daily_seals_due
from approvals.audit.models import DailySeal
from approvals.audit.retention import retention_set
from approvals.audit.seal import seal_all, seal_key
from approvals.audit.verify import audit_verify
from approvals.models import Tenant, Workflow
from approvals.runtime.partitions import month_add

from ..concurrency.support import race
from ..helpers import decide, start_expense
from .support import clear_of_midnight, rechain, run_expenses, triggers_off, verify
from .test_archive import _old_month, archive_root  # noqa: F401

DAYS_BACK = 4


@pytest.fixture(autouse=True)
def _clear_of_midnight() -> Iterator[None]:
    with clear_of_midnight():
        yield


def _day(back: int) -> dt.date:
    return (clock.now() - dt.timedelta(days=back)).date()


def _at_noon(back: int) -> dt.timedelta:
    """The clock shift that puts now at noon UTC ``back`` days ago."""
    now = clock.now()
    noon = dt.datetime.combine(_day(back), dt.time(12), tzinfo=dt.UTC)
    return noon - now


@pytest.fixture
def days(acme: Any, api: Any) -> dict[str, Any]:
    """Two workflows started four days ago, one decided three days ago; two more
    started two days ago; then the chain seals and the daily seals as the job makes
    them."""
    with clock.shifted(_at_noon(DAYS_BACK)):
        first = run_expenses(api, 2, prefix="D4")
    with clock.shifted(_at_noon(2)):
        second = run_expenses(api, 2, prefix="D2")
    seal_all()
    made = daily_seals_due()
    return {"first": first, "second": second, "made": made, "tenant": acme}


def _edit_comment(workflow_id: str) -> None:
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "edited"}\' '
            "WHERE workflow_id = %s AND seq = 1",
            [workflow_id],
        )
    rechain(workflow_id)


def _as_superuser(sql: str, params: list[Any]) -> None:
    """With every trigger off for the session (append-only ones too), as a superuser may."""
    with connection.cursor() as c:
        c.execute("SET CONSTRAINTS ALL IMMEDIATE")
        c.execute("SET session_replication_role = replica")
        try:
            c.execute(sql, params)
        finally:
            c.execute("SET session_replication_role = origin")


def test_one_row_per_day_chained_and_each_workflow_proves_its_place(
    days: dict[str, Any],
) -> None:
    # given: the days from the first workflow's to yesterday, each sealed once
    seals = list(DailySeal.objects.filter(tenant=days["tenant"]).order_by("day"))
    assert [s.day for s in seals] == [_day(n) for n in range(DAYS_BACK, 0, -1)]
    assert [s.count for s in seals] == [2, 2, 4, 4]
    assert seals[0].prev_signature == ""
    assert all(b.prev_signature == a.signature for a, b in zip(seals, seals[1:], strict=False))
    # when: a workflow's proof for the last day
    wid = days["first"][0]
    proof = inclusion_proof(tenant=days["tenant"], workflow_id=wid, day=seals[-1].day)
    # then: the path leads to the signed root, and a wrong leaf does not
    assert proof is not None and proof.count == 4 and len(proof.path) == 2
    assert proof.leads_to(seals[-1].root, seals[-1].count)
    wf = Workflow.objects.get(pk=wid)
    assert (proof.seq, proof.hash) == (wf.version, wf.last_hash)
    forged = proof.__class__(**{**proof.__dict__, "seq": proof.seq - 1})
    assert not forged.leads_to(seals[-1].root, seals[-1].count)
    # and the command says so, in words
    out, ok = verify("--workflow", wid)
    assert ok, out
    assert "leaf" in out and "of 4" in out and "leads to the signed root" in out
    out, ok = verify()
    assert ok, out
    assert "4 daily seal(s) checked (signatures and the chain of days) and the last" in out
    out, ok = verify("--all-days")
    assert ok, out
    assert "4 daily seal(s) checked and their roots recomputed" in out


def test_a_day_holds_the_heads_as_they_were_at_its_end(acme: Any, api: Any) -> None:
    # given: started one day, decided the next
    with clock.shifted(_at_noon(3)):
        started = start_expense(api("alice"), 4_500_000, subject="S-1")
        assert started.status_code == 201, started.content
        wid = started.json()["workflowId"]
    with clock.shifted(_at_noon(2)):
        assert decide(api("bob"), wid, "approve", "S-bob").status_code == 200
    # when
    daily_seals_due()
    # then: the first day's leaf is the head before the next day's event
    version = Workflow.objects.get(pk=wid).version
    leaves = {w: (seq, h) for w, seq, h in day_leaves(acme.pk, _day(3), exact=True)}
    assert leaves[wid][0] < version
    sealed = DailySeal.objects.get(tenant=acme, day=_day(3))
    assert (sealed.count, sealed.root) == day_root(acme.pk, _day(3), exact=True)
    assert day_end(_day(3)) == dt.datetime.combine(_day(2), dt.time(0), tzinfo=dt.UTC)


def test_running_twice_writes_one_row_per_day(days: dict[str, Any]) -> None:
    # when
    again = daily_seals_due()
    call_command("seal_audit", "--daily", stdout=io.StringIO())
    # then
    assert len(days["made"]) == DAYS_BACK and again == []
    assert DailySeal.objects.filter(tenant=days["tenant"]).count() == DAYS_BACK


def test_a_changed_event_hash_fails_the_workflow_and_the_day(days: dict[str, Any]) -> None:
    # given: an event edited and every hash after it recomputed, the workflow's head too
    wid = days["first"][1]
    _edit_comment(wid)
    # when
    one, one_ok = verify("--workflow", wid)
    last, last_ok = verify()
    every, every_ok = verify("--all-days")
    # then: the last day shows it by default, and every day with --all-days
    assert not one_ok and not last_ok and not every_ok
    assert f"BROKEN workflow {wid}: not included in the daily seal of acme for" in one
    assert "(its history was rewritten)" in one
    yesterday = offline_verify.day_words(_day(1))
    assert f"the daily seal of acme for {yesterday}: the history now gives" in last
    for back in range(DAYS_BACK, 0, -1):
        day = offline_verify.day_words(_day(back))
        assert f"the daily seal of acme for {day}: the history now gives" in every
    assert last.count("the history now gives") == 1  # the earlier days: signature, chain


def test_a_removed_workflow_fails_every_day_it_was_in(days: dict[str, Any]) -> None:
    # given
    wid = days["second"][0]
    _as_superuser("DELETE FROM approvals_workflowevent WHERE workflow_id = %s", [wid])
    _as_superuser("DELETE FROM approvals_workflow WHERE id = %s", [wid])
    # when
    out, ok = verify()
    # then: the days before it started still agree; the days after say 3, not 4
    assert not ok
    yesterday = offline_verify.day_words(_day(1))
    assert f"the daily seal of acme for {yesterday}: the history now gives 3 workflow(s)" in out
    assert "the seal holds 4" in out
    first = offline_verify.day_words(_day(DAYS_BACK))
    assert f"acme for {first}: the history" not in out


def test_a_forged_root_fails_its_signature(days: dict[str, Any]) -> None:
    # given: yesterday's root rewritten to match a changed history
    yesterday = DailySeal.objects.get(tenant=days["tenant"], day=_day(1))
    _as_superuser(
        "UPDATE approvals_dailyseal SET root = %s WHERE id = %s", ["ab" * 32, yesterday.pk]
    )
    # when
    out, ok = verify()
    one, one_ok = verify("--workflow", days["first"][0])
    # then
    day = offline_verify.day_words(_day(1))
    assert not ok and not one_ok
    assert f"the daily seal of acme for {day}: its signature does not verify" in out
    assert f"the daily seal of acme for {day}: its signature does not verify" in one


def test_a_deleted_day_breaks_the_chain_of_days(days: dict[str, Any]) -> None:
    # given
    _as_superuser(
        "DELETE FROM approvals_dailyseal WHERE tenant_id = %s AND day = %s",
        [days["tenant"].pk, _day(2)],
    )
    # when
    out, ok = verify()
    # then
    gone, after, before = (offline_verify.day_words(_day(n)) for n in (2, 1, 3))
    assert not ok
    assert (
        f"the daily seals of acme for {gone} to {gone} are gone (the seal of {after} follows "
        f"that of {before})" in out
    )


def test_n_workflows_over_d_days_write_d_rows(acme: Any, api: Any) -> None:
    # given: three workflows a day for five days
    for back in range(5, 0, -1):
        with clock.shifted(_at_noon(back)):
            run_expenses(api, 3, prefix=f"G{back}")
    # when: the job runs every day, and once more
    for back in range(4, -1, -1):
        with clock.shifted(_at_noon(back)):
            daily_seals_due()
    daily_seals_due()
    # then: one row per day, whatever the number of workflows
    seals = DailySeal.objects.filter(tenant=acme)
    assert seals.count() == 5
    assert list(seals.order_by("day").values_list("count", flat=True)) == [3, 6, 9, 12, 15]
    assert Tenant.objects.count() * 5 >= DailySeal.objects.count()


def test_the_offline_verifier_checks_a_workflows_proof(
    days: dict[str, Any], tmp_path: Path
) -> None:
    # given: the export of one workflow
    wid = days["first"][0]
    path = tmp_path / "one.jsonl"
    with path.open("w") as f:
        call_command(
            "export_audit", "--tenant", "acme", "--format", "jsonl", "--workflow", wid, stdout=f
        )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    proofs = [line["proof"] for line in lines if "proof" in line]
    daily = [line["daily_seal"] for line in lines if "daily_seal" in line]
    assert len(proofs) == 1 and len(daily) == DAYS_BACK
    key = seal_key()
    # when / then: it checks, with the key and without
    report = offline_verify.verify_export(str(path), seal_key=key, jobs=1)
    assert report.ok, report.problems
    assert "1 workflow(s) in its daily seal" in report.summary()
    assert offline_verify.verify_export(str(path), jobs=1).ok
    # and a leaf that is not the chain's, a forged root and a deleted day each fail
    for change, words in (
        (lambda p, d: p.update(hash="0" * 64), "not included in the daily seal of acme"),
        (lambda p, d: d[-1].update(root="ab" * 32), "its signature does not verify"),
        (lambda p, d: d.pop(1), "are gone (the seal of"),
    ):
        proof, seals = dict(proofs[0]), [dict(s) for s in daily]
        change(proof, seals)
        tampered = tmp_path / "tampered.jsonl"
        body = [line for line in lines if "proof" not in line and "daily_seal" not in line]
        body += [{"daily_seal": s} for s in seals] + [{"proof": proof}]
        tampered.write_text("".join(json.dumps(line) + "\n" for line in body))
        report = offline_verify.verify_export(str(tampered), seal_key=key, jobs=1)
        assert not report.ok
        assert any(words in str(p) for p in report.problems), report.problems


@pytest.mark.django_db(transaction=True)
def test_two_sealers_racing_write_one_row_per_day(acme: Any, api: Any) -> None:
    # given
    with clock.shifted(_at_noon(3)):
        run_expenses(api, 2, prefix="R")
    # when: four threads, each on its own connection, seal at once
    made = race([daily_seals_due] * 4)
    # then
    assert sum(len(m) for m in made) == 3
    assert DailySeal.objects.filter(tenant=acme).count() == 3
    days = list(DailySeal.objects.filter(tenant=acme).order_by("day"))
    assert all(b.prev_signature == a.signature for a, b in zip(days, days[1:], strict=False))


def test_the_archive_manifest_carries_and_checks_the_months_daily_seals(
    acme: Any,
    archive_root: Path,  # noqa: F811
    settings: Any,
) -> None:
    # given: a month old enough to archive, every day since sealed
    settings.APPROVALS_DAILY_SEAL_CATCH_UP_DAYS = 1000
    month, _ = _old_month()
    retention_set(tenant=acme, years=1, by="olga")
    seal_all()
    daily_seals_due()
    in_month = DailySeal.objects.filter(
        tenant=acme, day__gte=month, day__lt=month_add(month, 1)
    ).order_by("day")
    assert in_month.exists()
    # when
    assert month_archive(month).dropped
    # then: the manifest holds them, and verify_audit (from the archive) passes
    _, manifest_name = archive_names(acme.pk, month)
    manifest = json.loads((archive_root / manifest_name).read_text())
    assert [s["day"] for s in manifest["daily_seals"]] == [s.day.isoformat() for s in in_month]
    breaks, _ = audit_verify(tenant=acme)
    assert breaks == []
    # and a daily seal rewritten in the manifest (the manifest signed again) is found
    manifest["daily_seals"][0]["root"] = "ab" * 32
    manifest["signature"] = manifest_signature(manifest, key=seal_key())
    (archive_root / manifest_name).write_text(json.dumps(manifest))
    problems = archive_check(acme.pk, month).problems
    day = offline_verify.day_words(manifest["daily_seals"][0]["day"])
    assert any(f"its daily seal of {day} does not verify" in p for p in problems), problems
