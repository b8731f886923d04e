"""approvals.runtime.replica without a replica configured (the suite's own database):
every read and write goes to the primary, the replica blocks read there, and /metrics
shows no replica gauge. The real replica is tests/approvals/durability/test_replica.py."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, router

from approvals.models import Workflow
from approvals.runtime import replica

pytestmark = pytest.mark.django_db


def test_the_router_is_installed_and_sends_everything_to_the_primary_outside_a_block():
    assert settings.DATABASE_ROUTERS == ["approvals.runtime.replica.ReplicaRouter"]
    assert router.db_for_read(Workflow) == DEFAULT_DB_ALIAS
    assert router.db_for_write(Workflow) == DEFAULT_DB_ALIAS
    assert replica.reading_alias() == DEFAULT_DB_ALIAS


def test_migrations_never_run_on_the_replica():
    the_router = replica.ReplicaRouter()
    assert the_router.allow_migrate(replica.REPLICA, "approvals") is False
    assert the_router.allow_migrate(DEFAULT_DB_ALIAS, "approvals") is True


def test_without_a_replica_its_reads_run_on_the_primary(acme):
    assert not replica.configured()
    assert replica.lag_seconds() is None

    where = replica.from_replica(replica.reading_alias)
    streamed = list(replica.streamed_from_replica(lambda: iter([replica.reading_alias()])))

    assert where == DEFAULT_DB_ALIAS
    assert streamed == [DEFAULT_DB_ALIAS]


def test_a_decorated_read_answers_as_the_function_does(acme):
    @replica.replica_read
    def count(*, tenant_id: int) -> int:
        return Workflow.objects.filter(tenant_id=tenant_id).count()

    assert count(tenant_id=acme.pk) == Workflow.objects.filter(tenant_id=acme.pk).count()


def test_metrics_show_no_replica_gauge_without_a_replica(client):
    body = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    assert "approvals_replica_lag_seconds" not in body
