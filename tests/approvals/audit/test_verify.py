"""verify_audit finds every kind of tampering a database superuser could do: an edited
event, a deleted tail, a chain recomputed after an edit (only the seals can tell), and
a forged seal; and it reports nothing on an intact database."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction

from approvals.audit.models import ChainSeal
from approvals.audit.seal import SEAL_KEY_MISSING, seal_create
from approvals.audit.verify import audit_verify, chain_verify
from approvals.models import Workflow

from .support import rechain, run_expenses, triggers_off, verify

pytestmark = pytest.mark.django_db


def edit_comment(workflow_id: str, seq: int) -> None:
    with triggers_off(), connection.cursor() as c:
        c.execute(
            'UPDATE approvals_workflowevent SET payload = payload || \'{"comment": "edited"}\' '
            "WHERE workflow_id = %s AND seq = %s",
            [workflow_id, seq],
        )


@pytest.fixture
def histories(acme: Any, api: Any) -> list[str]:
    return run_expenses(api, 3)


def test_an_intact_database_verifies(histories: list[str]) -> None:
    call_command("seal_audit", stdout=io.StringIO())
    output, ok = verify()
    assert ok, output
    assert "OK: 3 workflow chain(s)" in output
    assert "BROKEN" not in output
    assert all(chain_verify(workflow=wf) is None for wf in Workflow.objects.all())


def test_an_edited_event_is_named(histories: list[str]) -> None:
    edit_comment(histories[1], 2)

    output, ok = verify()

    assert not ok
    assert f"BROKEN workflow {histories[1]} seq 2: its content does not match its hash" in output
    assert histories[0] not in output and histories[2] not in output
    assert chain_verify(workflow=Workflow.objects.get(pk=histories[1])) == 2


def test_a_deleted_tail_is_found(histories: list[str]) -> None:
    wf = Workflow.objects.get(pk=histories[0])
    with triggers_off(), connection.cursor() as c:
        c.execute(
            "DELETE FROM approvals_workflowevent WHERE workflow_id = %s AND seq > %s",
            [wf.pk, wf.version - 2],
        )

    output, ok = verify()

    assert not ok
    assert (
        f"BROKEN workflow {wf.pk} seq {wf.version - 1}: events {wf.version - 1}..{wf.version} "
        f"are gone (the workflow records version {wf.version})" in output
    )
    assert "the last event's hash is not the workflow's last_hash" in output


def test_a_recomputed_chain_is_caught_by_the_seal(histories: list[str]) -> None:
    call_command("seal_audit", stdout=io.StringIO())
    wf = Workflow.objects.get(pk=histories[2])
    edit_comment(histories[2], 1)
    rechain(histories[2])
    # the chain alone now looks intact ...
    assert chain_verify(workflow=Workflow.objects.get(pk=histories[2])) is None

    output, ok = verify()

    # ... but its head is not the one the seal holds
    assert not ok
    assert (
        f"BROKEN workflow {wf.pk} seq {wf.version}: no longer matches the head sealed by seal #"
        in output
    )
    assert output.count("BROKEN") == 1


def test_a_forged_seal_is_reported(histories: list[str]) -> None:
    good = seal_create(tenant=Workflow.objects.get(pk=histories[0]).tenant)
    forged = ChainSeal.objects.create(
        tenant=good.tenant,
        sealed_at=good.sealed_at,
        count=good.count,
        digest=good.digest,
        heads=good.heads,
        key_id=good.key_id,
        signature="0" * 64,
    )

    output, ok = verify()

    assert not ok
    assert f"BROKEN seals: {forged}: its signature does not verify" in output
    assert str(good) not in output


def test_a_seal_with_altered_heads_is_reported(histories: list[str]) -> None:
    good = seal_create(tenant=Workflow.objects.get(pk=histories[0]).tenant)
    heads = dict(good.heads)
    heads[histories[0]] = [1, "f" * 64]
    ChainSeal.objects.create(
        tenant=good.tenant,
        sealed_at=good.sealed_at,
        count=good.count,
        digest=good.digest,
        heads=heads,
        key_id=good.key_id,
        signature=good.signature,
    )
    breaks, _ = audit_verify()
    assert [b.what.split(": ", 1)[1] for b in breaks] == ["its heads do not hash to its digest"]


def test_seals_are_append_only(histories: list[str]) -> None:
    seal = seal_create(tenant=Workflow.objects.get(pk=histories[0]).tenant)
    for statement in (
        "UPDATE approvals_chainseal SET signature = 'x' WHERE id = %s",
        "DELETE FROM approvals_chainseal WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="chain seals are append-only"),
            transaction.atomic(),
            connection.cursor() as c,
        ):
            c.execute(statement, [seal.pk])
    assert ChainSeal.objects.get(pk=seal.pk).signature == seal.signature
    with pytest.raises(ValueError, match="append-only"):
        seal.save()


def test_sealing_is_logged(histories: list[str], caplog: Any) -> None:
    with caplog.at_level(logging.INFO, logger="approvals.audit"):
        out = io.StringIO()
        call_command("seal_audit", "--tenant", "acme", stdout=out)
    seal = ChainSeal.objects.get()
    assert seal.count == 3 and set(seal.heads) == set(histories)
    assert f"digest={seal.digest}" in caplog.text and f"signature={seal.signature}" in caplog.text
    assert seal.digest in out.getvalue()


def test_sealing_refuses_without_a_key(histories: list[str], settings: Any) -> None:
    settings.APPROVALS_AUDIT_SEAL_KEY = ""
    settings.DEBUG = False
    with pytest.raises(CommandError, match="APPROVALS_AUDIT_SEAL_KEY is not set"):
        call_command("seal_audit", stdout=io.StringIO())
    assert not ChainSeal.objects.exists()
    assert SEAL_KEY_MISSING.startswith("APPROVALS_AUDIT_SEAL_KEY")


def test_a_seal_signed_with_another_key_is_reported(histories: list[str], settings: Any) -> None:
    call_command("seal_audit", stdout=io.StringIO())
    settings.APPROVALS_AUDIT_SEAL_KEY = "a-rotated-key"
    output, ok = verify()
    assert not ok
    assert "signed with another key" in output
