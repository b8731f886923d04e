"""The process of the streaming replica test (test_replica.py), run with DATABASE_URL
(the private primary), DATABASE_REPLICA_URL (its replica), PGAPPNAME (the name its
connections carry in pg_stat_activity) and REPLICA_STOP (the command that stops the
replica, as JSON): ``python replica_reads.py`` seeds the demo organisation, then
searches, decides, lags and stops the replica, and prints what it saw as JSON on its
last line (see ``main``). The test asserts; this only observes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import psycopg  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connections, transaction  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from approvals import metrics  # noqa: E402
from approvals.audit.export import ExportFilter, audit_export  # noqa: E402
from approvals.demo import seed_demo  # noqa: E402
from approvals.models import User  # noqa: E402
from approvals.runtime import replica, tenant_scope  # noqa: E402
from approvals.services.tokens import token_issue  # noqa: E402

APP = os.environ["PGAPPNAME"]
SEARCH = "/api/workflows?template=expense-approval"


def _server(url: str) -> psycopg.Connection[Any]:
    """A connection of the observer's own (another application name), in autocommit."""
    return psycopg.connect(url, autocommit=True, application_name="observer")


def _ours(url: str) -> list[tuple[str, str]]:
    """(last statement, its start) of each connection the app holds on the server."""
    with _server(url) as conn:
        rows = conn.execute(
            "SELECT query, query_start::text FROM pg_stat_activity"
            " WHERE application_name = %s ORDER BY backend_start",
            [APP],
        ).fetchall()
    return [(str(q), str(s)) for q, s in rows]


def _client(username: str) -> APIClient:
    client = APIClient()
    _, secret = token_issue(user=User.objects.get(username=username), name="replica-test")
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def _found(client: APIClient) -> list[str]:
    response = client.get(SEARCH)
    assert response.status_code == 200, response.content
    return sorted(item["workflowId"] for item in response.json()["workflows"])


def _caught_up(replica_url: str, workflow_id: str, status: str) -> None:
    with _server(replica_url) as conn:
        for _ in range(600):
            row = conn.execute(
                "SELECT public_status FROM approvals_workflow WHERE id = %s", [workflow_id]
            ).fetchone()
            if row is not None and row[0] == status:
                return
            time.sleep(0.05)
    raise AssertionError(f"the replica never showed {workflow_id} as {status}")


def _policy_counts(replica_url: str, tenant_id: int) -> dict[str, int]:
    """Workflows the app's role sees on the replica, acting for its tenant, for
    another, and for none: the replica holds the primary's roles and policies."""
    from approvals.runtime import tenant_scope

    out = {}
    with psycopg.connect(replica_url, application_name="observer") as conn:
        for name, tenant in (
            ("own", str(tenant_id)),
            ("other", str(tenant_id + 1000)),
            ("none", ""),
        ):
            with conn.transaction():
                # as the app acts for a tenant: sealed by approvals_act_for (the policies
                # refuse a tenant set by hand), then on the app's role
                conn.execute(tenant_scope.ACT_SQL, [int(tenant) if tenant else None])
                out[name] = conn.execute("SELECT count(*) FROM approvals_workflow").fetchone()[0]
    return out


def _lag_gauge() -> str:
    body = APIClient().get("/metrics").content.decode()
    lines = [line for line in body.splitlines() if line.startswith("approvals_replica_lag_seconds")]
    return lines[0].split()[-1] if lines else "absent"


def _fallbacks() -> dict[str, float]:
    return {
        s.labels["reason"]: s.value
        for m in metrics.REPLICA_FALLBACKS.collect()
        for s in m.samples
        if s.name.endswith("_total")
    }


def main() -> dict[str, Any]:
    primary_url, replica_url = os.environ["DATABASE_URL"], os.environ["DATABASE_REPLICA_URL"]
    seen: dict[str, Any] = {"routers": settings.DATABASE_ROUTERS}
    acme = seed_demo()
    alice, bob = _client("alice"), _client("bob")
    started = alice.post(
        "/api/workflows",
        {
            "template": "expense-approval",
            "subject": {"type": "expense", "id": "R-REPLICA"},
            "data": {"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
        },
        format="json",
    )
    assert started.status_code == 201, started.content
    wid = started.json()["workflowId"]
    _caught_up(replica_url, wid, "PENDING_MANAGER")
    seen["replica_before_search"] = _ours(replica_url)

    # a search reads from the replica
    seen["found"] = _found(bob)
    seen["lag_gauge_up"] = _lag_gauge()  # asks the replica too
    seen["replica_after_search"] = _ours(replica_url)

    # the inbox and a decision stay on the primary
    seen["primary_before_decision"] = _ours(primary_url)
    seen["inbox"] = [i["workflowId"] for i in bob.get("/api/me/tasks").json()["items"]]
    decided = bob.post(
        f"/api/workflows/{wid}/decisions",
        {"decision": "approve", "requestId": "replica-1"},
        format="json",
    )
    seen["decision_status"] = decided.status_code
    seen["primary_after_decision"] = _ours(primary_url)
    seen["replica_after_decision"] = _ours(replica_url)
    with _server(primary_url) as conn:
        row = conn.execute("SELECT public_status FROM approvals_workflow WHERE id = %s", [wid])
        seen["status_on_primary"] = row.fetchone()[0]
    _caught_up(replica_url, wid, seen["status_on_primary"])
    seen["policy_on_replica"] = _policy_counts(replica_url, acme.pk)

    # a replica behind by more than the setting is left alone
    settings.APPROVALS_REPLICA_MAX_LAG_SECONDS = 1
    with _server(replica_url) as conn:
        conn.execute("SELECT pg_wal_replay_pause()")
    try:
        seed_demo()  # commits on the primary the replica does not replay
        with _server(primary_url) as conn:
            conn.execute("CREATE TABLE replica_test_tick (at timestamptz)")
        time.sleep(2.5)
        replica._checked.clear()  # the next read checks the lag now
        seen["found_while_lagging"] = _found(bob)
        seen["replica_while_lagging"] = _ours(replica_url)  # the lag check, no search
        seen["lag_while_paused"] = replica.lag_seconds()
    finally:
        with _server(replica_url) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
    settings.APPROVALS_REPLICA_MAX_LAG_SECONDS = 30
    time.sleep(1)
    replica._checked.clear()
    seen["found_caught_up"] = _found(bob)

    # the replica stops under an export's download, after its first lines: the rest of
    # the download comes from the primary, and it reads as the primary's own export
    settings.APPROVALS_AUDIT_EXPORT_CHUNK = 1  # a round trip per event: cut part way
    replica._checked.clear()
    with transaction.atomic(), tenant_scope.acting_for(acme.pk):
        lines = audit_export(tenant_id=acme.pk, filters=ExportFilter(), fmt="jsonl")
        head = [next(lines) for _ in range(3)]
        seen["replica_under_export"] = _ours(replica_url)
        subprocess.run(json.loads(os.environ["REPLICA_STOP"]), check=True, capture_output=True)
        seen["export_cut"] = head + list(lines)
        seen["export_primary"] = list(
            audit_export(tenant_id=acme.pk, filters=ExportFilter(), fmt="jsonl")
        )
    seen["fallbacks_after_export"] = _fallbacks()

    # the replica stopped: the next searches answer from the primary
    seen["found_replica_down"] = _found(bob)
    seen["found_replica_down_again"] = _found(bob)
    seen["primary_after_fallback"] = _ours(primary_url)
    seen["lag_gauge_down"] = _lag_gauge()
    seen["fallbacks"] = _fallbacks()
    seen["workflow"] = wid
    connections.close_all()
    return seen


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
