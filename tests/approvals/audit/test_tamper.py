"""What a database superuser can do to the history, each found by ``verify_audit`` run as
an operator runs it: an edited event with every hash recomputed, a deleted tail with
the workflow's version and last hash fixed up, a deleted workflow, an event moved into
another organisation, seals deleted (all of them, or one in the middle) or rewritten,
and a rebuild of the read models over a tampered history (refused unless the operator
says why, and then recorded). An untouched history passes, old (format 1) events too.

Each tampering is done as a superuser would: raw SQL with the append-only triggers
switched off."""

from __future__ import annotations

import datetime as dt
import io
from typing import Any

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from approvals import clock
from approvals.audit.models import AuditOverride, ChainSeal, SealedHead
from approvals.audit.override import override_verifies
from approvals.audit.seal import seal_create, seal_key
from approvals.audit.verify import OTHER_TENANT, SEAL_UNLINKED, SEALS_MISSING
from approvals.management.commands.rebuild_read_models import OVERRIDDEN, REFUSED
from approvals.models import Tenant, Workflow, WorkflowEvent
from approvals.runtime.chain import HASH_V3

from .support import bulk_history, rechain, run_expenses, triggers_off, verify

pytestmark = pytest.mark.django_db


def seal() -> None:
    call_command("seal_audit", stdout=io.StringIO())


def later() -> dt.timedelta:
    """Past the time within which every event must be under a seal."""
    return dt.timedelta(seconds=3 * settings.APPROVALS_AUDIT_SEAL_INTERVAL_SECONDS)


def edit_comment(workflow_id: str, seq: int) -> None:
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "edited"}\' '
            "WHERE workflow_id = %s AND seq = %s",
            [workflow_id, seq],
        )
    rechain(workflow_id)


def delete_tail(workflow_id: str, keep: int) -> None:
    with triggers_off(), connection.cursor() as c:
        c.execute(
            "DELETE FROM approvals_workflowevent WHERE workflow_id = %s AND seq > %s",
            [workflow_id, keep],
        )
    rechain(workflow_id)


def delete_workflow(workflow_id: str) -> None:
    """The events and the row, with every trigger (foreign keys too) off for the session,
    as a superuser may."""
    with connection.cursor() as c:
        c.execute("SET CONSTRAINTS ALL IMMEDIATE")
        c.execute("SET session_replication_role = replica")
        try:
            c.execute("DELETE FROM approvals_workflowevent WHERE workflow_id = %s", [workflow_id])
            c.execute("DELETE FROM approvals_workflow WHERE id = %s", [workflow_id])
        finally:
            c.execute("SET session_replication_role = origin")


def delete_seals(where: str = "TRUE", params: list[Any] | None = None) -> None:
    with triggers_off(), connection.cursor() as c:
        c.execute(f"DELETE FROM approvals_chainseal WHERE {where}", params or [])


@pytest.fixture
def histories(acme: Any, api: Any) -> list[str]:
    return run_expenses(api, 3)


def test_an_untampered_history_passes(histories: list[str]) -> None:
    # given: sealed as the periodic job seals, and time goes on
    seal()
    with clock.shifted(later()):
        # when
        output, ok = verify()
    # then
    assert ok, output
    assert "OK: 3 workflow chain(s)" in output
    assert all(
        e.hash_format == HASH_V3 for e in WorkflowEvent.objects.filter(workflow_id__in=histories)
    )


def test_old_format_events_still_verify(acme: Any) -> None:
    # given: events hashed as before format 2 (hash_format NULL), then sealed
    tenant = Tenant.objects.get(slug="acme")
    bulk_history(tenant, workflows=3, events_each=4, hash_format=1)
    assert set(WorkflowEvent.objects.values_list("hash_format", flat=True)) == {None}
    seal()
    with clock.shifted(later()):
        output, ok = verify()
    assert ok, output
    # and an edit to one of them, hashes recomputed in format 1, is still found
    wid = str(Workflow.objects.order_by("pk").first().pk)  # type: ignore[union-attr]
    edit_comment(wid, 2)
    output, ok = verify()
    assert not ok
    assert f"BROKEN workflow {wid} seq 4: no longer matches the head sealed by seal #" in output


def test_an_edited_event_with_hashes_recomputed_is_found(histories: list[str]) -> None:
    seal()
    wid = histories[1]
    edit_comment(wid, 2)

    output, ok = verify()

    assert not ok
    version = Workflow.objects.get(pk=wid).version
    assert f"BROKEN workflow {wid} seq {version}: no longer matches the head sealed by" in output


def test_an_edit_of_events_left_unsealed_past_the_interval_is_found(histories: list[str]) -> None:
    # given: no seal was made (sealing stopped, or the seals were removed) and the
    # events are older than two seal intervals
    with clock.shifted(later()):
        edit_comment(histories[0], 2)

        output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {histories[0]} seq 1: written at " in output
    assert "and under no seal (seals were deleted, or sealing stopped)" in output


def test_a_deleted_tail_with_version_and_last_hash_fixed_up_is_found(
    histories: list[str],
) -> None:
    seal()
    wid = histories[2]
    version = Workflow.objects.get(pk=wid).version
    delete_tail(wid, keep=version - 2)

    output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {wid} seq {version}: sealed by seal #" in output
    assert "now missing" in output


def test_a_deleted_workflow_is_found(histories: list[str]) -> None:
    seal()
    delete_workflow(histories[0])

    output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {histories[0]}: sealed at version " in output


def test_a_deleted_workflow_is_found_by_the_next_seal_too(histories: list[str]) -> None:
    seal()
    delete_workflow(histories[0])
    seal()  # the seal job runs on: its digest covers 2 workflows, the seals name 3

    output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {histories[0]}: sealed at version " in output
    assert "the heads the seals of acme list do not add up to the 2 workflow(s)" in output


def test_an_event_moved_to_another_organisation_is_found(histories: list[str]) -> None:
    seal()
    other = Tenant.objects.create(slug="globex", name="Globex")
    wid = histories[1]
    with triggers_off(), connection.cursor() as c:
        c.execute(
            "UPDATE approvals_workflowevent SET tenant_id = %s WHERE workflow_id = %s AND seq = 1",
            [other.pk, wid],
        )
    rechain(wid)  # format 2 covers the tenant: the forger recomputes with the new one

    output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {wid} seq 1: {OTHER_TENANT}" in output
    assert "no longer matches the head sealed by" in output
    # the other organisation's own check finds nothing of its own to trust
    assert WorkflowEvent.objects.filter(tenant=other).count() == 1


def test_deleting_all_seals_is_found(histories: list[str]) -> None:
    seal()
    with clock.shifted(later()):
        delete_seals()
        SealedHead.objects.all().delete()  # the bookkeeping too: nothing says a seal was made

        output, ok = verify()

    assert not ok
    for wid in histories:
        assert f"BROKEN workflow {wid} seq 1: written at " in output
    assert "and under no seal" in output


def test_deleting_the_seals_after_the_first_is_found(histories: list[str]) -> None:
    # given: a first seal, more history, a second seal covering it
    seal()
    first = ChainSeal.objects.get()
    before = Workflow.objects.get(pk=histories[0]).version
    _cancel(histories[0])
    seal()
    assert ChainSeal.objects.count() == 2
    with clock.shifted(later()):
        # when: every seal after the first goes
        delete_seals("id <> %s", [first.pk])

        output, ok = verify()

    # then: what the second seal covered is older than the interval and under no seal
    assert not ok
    assert f"BROKEN workflow {histories[0]} seq {before + 1}: written at " in output
    assert output.count("BROKEN") == 1


def test_a_seal_deleted_in_the_middle_is_found(histories: list[str]) -> None:
    seal()
    _cancel(histories[0])
    middle = seal_create(tenant=Tenant.objects.get(slug="acme"))
    _cancel(histories[1])
    seal()
    assert middle is not None and middle.number == 2
    delete_seals("id = %s", [middle.pk])

    output, ok = verify()

    assert not ok
    assert SEALS_MISSING.format(first=2, last=2, tenant="acme", next=3) in output
    assert "does not carry the signature of the seal numbered before it" in output


def test_a_rewritten_seal_is_found(histories: list[str]) -> None:
    seal()
    _cancel(histories[0])
    second = seal_create(tenant=Tenant.objects.get(slug="acme"))
    assert second is not None
    # a forger swaps the second seal for one of their own, linked as the real one was
    with triggers_off(), connection.cursor() as c:
        c.execute(
            "UPDATE approvals_chainseal SET heads = '{}'::jsonb, count = 2 WHERE id = %s",
            [second.pk],
        )

    output, ok = verify()

    assert not ok
    assert (
        f"BROKEN seals: {ChainSeal.objects.get(pk=second.pk)}: its signature does not verify"
        in (output)
    )


def test_seals_are_numbered_and_linked(histories: list[str]) -> None:
    tenant = Tenant.objects.get(slug="acme")
    first = seal_create(tenant=tenant)
    assert seal_create(tenant=tenant, only_changed=True) is None  # nothing moved
    _cancel(histories[0])
    second = seal_create(tenant=tenant, only_changed=True)
    assert first is not None and second is not None
    assert (first.number, second.number) == (1, 2)
    assert first.prev_signature == "" and second.prev_signature == first.signature
    assert set(first.heads) == set(histories) and list(second.heads) == [histories[0]]
    assert second.count == 3
    # linking is what the signature covers: a seal claiming another place does not verify
    assert SEAL_UNLINKED.startswith("{seal}: ")


def test_rebuild_is_refused_over_a_tampered_history(histories: list[str]) -> None:
    seal()
    wid = histories[2]
    version = Workflow.objects.get(pk=wid).version
    delete_tail(wid, keep=version - 2)

    out = io.StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("rebuild_read_models", stdout=out)

    assert str(refused.value) == REFUSED.format(n=out.getvalue().count("BROKEN"))
    assert f"BROKEN workflow {wid}" in out.getvalue()
    assert not AuditOverride.objects.exists()
    with pytest.raises(CommandError, match="Say why"):
        call_command("rebuild_read_models", "--despite-failed-verification", stdout=out)
    assert not AuditOverride.objects.exists()


def test_rebuild_despite_failed_verification_runs_and_is_recorded(
    histories: list[str], caplog: Any
) -> None:
    seal()
    wid = histories[2]
    version = Workflow.objects.get(pk=wid).version
    delete_tail(wid, keep=version - 2)

    out = io.StringIO()
    call_command(
        "rebuild_read_models",
        "--despite-failed-verification",
        "--reason",
        "restoring from the incident of 2 December, ticket 481",
        stdout=out,
    )

    override = AuditOverride.objects.get()
    assert override.action == "rebuild_read_models"
    assert override.reason == "restoring from the incident of 2 December, ticket 481"
    assert any(wid in p for p in override.problems)
    assert override_verifies(override, key=seal_key())
    assert (
        OVERRIDDEN.format(n=len(override.problems), id=override.pk, operator=override.operator)
        in out.getvalue()
    )
    assert "Rebuilt 3 workflow(s)" in out.getvalue()
    assert f"audit override #{override.pk}" in caplog.text
    # the rebuild does not launder the history: the seals still tell
    output, ok = verify()
    assert not ok and f"BROKEN workflow {wid} seq {version}: sealed by seal #" in output
    # and the record cannot be taken back
    with (
        pytest.raises(DatabaseError, match="audit overrides are append-only"),
        transaction.atomic(),
        connection.cursor() as c,
    ):
        c.execute("DELETE FROM approvals_auditoverride WHERE id = %s", [override.pk])


def test_rebuild_runs_on_a_history_that_verifies(histories: list[str]) -> None:
    seal()
    out = io.StringIO()
    call_command("rebuild_read_models", stdout=out)
    assert "Rebuilt 3 workflow(s)" in out.getvalue()
    assert not AuditOverride.objects.exists()


def _cancel(workflow_id: str) -> bool:
    """Move a workflow's head on: an organisation admin cancels it."""
    from approvals.models import User
    from approvals.services.workflows import workflow_cancel

    workflow_cancel(
        user=User.objects.get(username="olga"),
        workflow_id=workflow_id,
        reason="tamper test",
        request_id=f"cancel-{workflow_id}",
    )
    return True
