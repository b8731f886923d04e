"""verify_replay: every history replays, under its pinned workflow template version, to
the snapshot and status the command path stored."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from approvals.audit.replay import NOT_AN_OBJECT, replay_verify
from approvals.models import Workflow

from .support import run_expenses

pytestmark = pytest.mark.django_db


def test_recorded_histories_replay_to_their_snapshots(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 2)
    cancelled = api("alice").post(
        f"/api/workflows/{ids[1]}/cancel", {"requestId": "c-1"}, format="json"
    )
    assert cancelled.status_code == 200
    out = io.StringIO()

    call_command("verify_replay", stdout=out)

    assert "OK: 2 workflow(s) replay to their stored state." in out.getvalue()
    assert {wf.status for wf in Workflow.objects.all()} == {"RUNNING", "CANCELLED"}


def test_a_snapshot_that_does_not_match_its_history_is_reported(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 3)
    with connection.cursor() as c:
        c.execute(
            "UPDATE approvals_workflow "
            "SET snapshot = jsonb_set(snapshot, '{step}', '\"finance_x\"') WHERE id = %s",
            [ids[0]],
        )
        c.execute(
            "UPDATE approvals_workflow SET status = 'COMPLETED', public_status = 'COMPLETED' "
            "WHERE id = %s",
            [ids[2]],
        )
    out = io.StringIO()

    with pytest.raises(CommandError, match=r"2 workflow\(s\) do not replay"):
        call_command("verify_replay", stdout=out)

    lines = out.getvalue().splitlines()
    assert any(
        line.startswith(f"DIVERGED workflow {ids[0]}: snapshot differs from the replayed state")
        and ".step: stored 'finance_x'" in line
        for line in lines
    ), lines
    assert f"DIVERGED workflow {ids[2]}: status COMPLETED, replayed RUNNING" in lines
    assert not any(ids[1] in line for line in lines)
    found, checked = replay_verify(tenant=acme)
    assert checked == 3 and {d.workflow_id for d in found} == {ids[0], ids[2]}


def test_a_snapshot_of_an_older_shape_is_checked_on_what_it_holds(acme: Any, api: Any) -> None:
    ids = run_expenses(api, 2)
    # As an older release stored them: an earlier snapshot version, without the fields
    # added since (the next command would rewrite it); the second one also altered.
    with connection.cursor() as c:
        for wid, step in ((ids[0], None), (ids[1], "finance_x")):
            c.execute(
                "UPDATE approvals_workflow SET snapshot = (snapshot - 'failed_step')"
                " || jsonb_build_object('snapshot_version', 3) WHERE id = %s",
                [wid],
            )
            if step:
                c.execute(
                    "UPDATE approvals_workflow"
                    " SET snapshot = jsonb_set(snapshot, '{step}', to_jsonb(%s::text))"
                    " WHERE id = %s",
                    [step, wid],
                )

    found, checked = replay_verify()

    assert checked == 2
    assert [str(d) for d in found if d.workflow_id == ids[0]] == []
    assert [(d.workflow_id, ".step" in d.what) for d in found] == [(ids[1], True)]


@pytest.mark.parametrize(
    ("snapshot", "kind"),
    [
        ("[1, 2]", "a list"),
        ('"text"', "a string"),
        ("5", "a number"),
        ("true", "a boolean"),
        ("[]", "a list"),
        ('""', "a string"),
        ("0", "a number"),
        ("null", "null"),
    ],
)
def test_a_snapshot_that_is_not_an_object_is_a_divergence_not_a_traceback(
    acme: Any, api: Any, snapshot: str, kind: str
) -> None:
    ids = run_expenses(api, 2)
    with connection.cursor() as c:
        c.execute(
            "UPDATE approvals_workflow SET snapshot = %s::jsonb WHERE id = %s", [snapshot, ids[0]]
        )
    out = io.StringIO()

    with pytest.raises(CommandError, match=r"1 workflow\(s\) do not replay"):
        call_command("verify_replay", stdout=out)

    assert out.getvalue().splitlines() == [
        f"DIVERGED workflow {ids[0]}: " + NOT_AN_OBJECT.format(kind=kind)
    ]
