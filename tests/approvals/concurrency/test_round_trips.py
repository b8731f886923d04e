"""Round trips to PostgreSQL per command, counted on the wire by a relay between the
app and the database (bench/_roundtrips.py): a start and a decision cost two (BEGIN,
the lock and the reads go together; the writes and COMMIT go together), and so do the
cheap refusals: a duplicate, a step that is not yours, a workflow you may not read,
one that does not exist. A count, not a time: it holds on any machine."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection

from approvals import access
from approvals.models import Timer, User, Workflow, WorkflowEvent
from approvals.notifications.models import MailMessage
from approvals.runtime.commands import (
    CommandRejected,
    WorkflowNotFound,
    command_execute,
    command_execute_many,
)
from approvals.services.workflows import workflow_decide, workflow_start
from templates_engine import commands as cmd

from ..helpers import decide, start_expense

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from _roundtrips import RoundTripCounter  # noqa: E402

pytestmark = [
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def relay(acme: Any) -> Iterator[RoundTripCounter]:
    settings = connection.settings_dict
    host, port = settings["HOST"], settings["PORT"]
    connection.close()
    with RoundTripCounter(host or "127.0.0.1", int(port or 5432)) as counter:
        settings["HOST"], settings["PORT"] = "127.0.0.1", counter.port
        try:
            connection.ensure_connection()
            yield counter
        finally:
            connection.close()
            settings["HOST"], settings["PORT"] = host, port


def trips(relay: RoundTripCounter, action: Callable[[], Any]) -> int:
    """Round trips of this thread's connection (mail and activity threads have their own)."""
    raw = connection.connection
    assert raw is not None
    with socket.socket(fileno=os.dup(raw.fileno())) as sock:
        port = sock.getsockname()[1]
    before = relay.turns_by_client.get(port, 0)
    with contextlib.suppress(WorkflowNotFound, CommandRejected):
        action()
    return relay.turns_by_client.get(port, 0) - before


def statements(relay: RoundTripCounter, action: Callable[[], Any]) -> int:
    """Statements this thread's connection sent (each Query or Execute message)."""
    raw = connection.connection
    assert raw is not None
    with socket.socket(fileno=os.dup(raw.fileno())) as sock:
        port = sock.getsockname()[1]
    before = relay.statements_by_client.get(port, 0)
    action()
    return relay.statements_by_client.get(port, 0) - before


def fewest_trips(relay: RoundTripCounter, action: Callable[[int], Any], times: int = 3) -> int:
    """The fewest round trips over ``times`` runs of ``action(i)``. The relay counts a
    turn whenever the client speaks after the server, and psycopg's pipeline sometimes
    sends a flush request (which nothing answers) while an answer is on its way: that
    turn then lands on one command or the next, one more here, one fewer there. A
    command that really costs a third trip costs it on every run."""
    return min(trips(relay, lambda i=i: action(i)) for i in range(times))  # type: ignore[misc]


def start(alice: User) -> uuid.UUID:
    return workflow_start(
        submitter=alice,
        template_key="expense-approval",
        subject_type="expense",
        subject_id=uuid.uuid4().hex,
        data={"amountPaise": 4_500_000, "currency": "INR", "department": "eng"},
    ).workflow_id


def test_a_start_and_a_decision_cost_two_round_trips(relay: RoundTripCounter) -> None:
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    start(alice)  # the directory is looked up once per process and version
    workflow_decide(user=bob, workflow_id=start(alice), decision="approve", request_id="warm")

    ids: list[uuid.UUID] = []
    assert trips(relay, lambda: ids.append(start(alice))) == 2
    decision = {"user": bob, "workflow_id": ids[0], "decision": "approve", "request_id": "r-1"}
    assert trips(relay, lambda: workflow_decide(**decision)) == 2
    assert WorkflowEvent.objects.filter(workflow_id=ids[0], request_id="r-1").count() == 1


def test_a_start_sends_six_statements_and_a_decision_seven(relay: RoundTripCounter) -> None:
    """BEGIN, the tenant's setting, the template, the subject's workflows with the
    directory version, the writes and COMMIT for a start; BEGIN, the setting, the lock
    with the directory version, the request id lookup, the timers it deletes, the
    writes (the tasks it deletes among them, with the inbox's counts) and COMMIT for a
    decision. Counted on the wire, so a statement added to either shows here
    (bench/write_path.py prices each)."""
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    fiona = User.objects.get(username="fiona")
    for user in (alice, bob, fiona):
        access.roles_of(user)  # as a request reads them, once, before the command
    workflow_decide(user=bob, workflow_id=start(alice), decision="approve", request_id="warm")

    ids: list[uuid.UUID] = []
    assert statements(relay, lambda: ids.append(start(alice))) == 6
    manager = {"user": bob, "workflow_id": ids[0], "decision": "approve", "request_id": "s-1"}
    assert statements(relay, lambda: workflow_decide(**manager)) == 7
    finance = {**manager, "user": fiona, "request_id": "s-2"}
    assert statements(relay, lambda: workflow_decide(**finance)) == 7
    assert Workflow.objects.get(pk=ids[0]).public_status == "APPROVED"


def test_a_reminder_timer_firing_costs_two_round_trips(relay: RoundTripCounter) -> None:
    """The reminder's event, its mail (links bound to the reminder, no history read)
    and the timer rows travel like any command's."""
    alice = User.objects.get(username="alice")
    wf = start(alice)
    reminder = Timer.objects.get(workflow_id=wf, kind="reminder")
    warm = Timer.objects.get(workflow_id=start(alice), kind="reminder")
    fire = {"tenant_id": warm.tenant_id, "command": cmd.TimerFired(warm.key)}
    command_execute(workflow_id=warm.workflow_id, **fire)  # per-process caches

    fire = {"tenant_id": reminder.tenant_id, "command": cmd.TimerFired(reminder.key)}
    assert trips(relay, lambda: command_execute(workflow_id=wf, **fire)) == 2
    assert MailMessage.objects.filter(workflow_id=wf, kind="reminder").count() == 1


def test_a_group_of_reminders_costs_two_round_trips_in_all(relay: RoundTripCounter) -> None:
    """The poller's group: five workflows locked in one statement, their events,
    mails and timer rows sent with one COMMIT."""
    alice = User.objects.get(username="alice")
    warm = Timer.objects.get(workflow_id=start(alice), kind="reminder")
    command_execute(
        tenant_id=warm.tenant_id, workflow_id=warm.workflow_id, command=cmd.TimerFired(warm.key)
    )
    wids = [start(alice) for _ in range(5)]
    reminders = Timer.objects.filter(workflow_id__in=wids, kind="reminder")
    group = [(t.tenant_id, t.workflow_id, cmd.TimerFired(t.key)) for t in reminders]

    assert trips(relay, lambda: command_execute_many(group)) == 2
    assert MailMessage.objects.filter(workflow_id__in=wids, kind="reminder").count() == 5


def test_a_group_of_two_organisations_reminders_costs_two_round_trips(
    relay: RoundTripCounter,
) -> None:
    """Each organisation's part acts for it (row-level security): its setting travels
    in the pipeline with its writes, so mixing tenants adds statements, not trips."""
    from approvals.services.templates import workflow_template_publish

    from ..helpers import REMINDING, second_organisation

    alice = User.objects.get(username="alice")
    globex, _ = second_organisation()
    gina = User.objects.get(username="gina")
    gina.manager = User.objects.create_user("gus", password="pw", tenant=globex)
    gina.save(update_fields=["manager"])
    acme = alice.tenant
    assert acme is not None
    for tenant in (acme, globex):
        workflow_template_publish(tenant=tenant, definition=REMINDING)

    def started(who: User) -> uuid.UUID:
        return workflow_start(
            submitter=who,
            template_key="reminding",
            subject_type="t",
            subject_id=uuid.uuid4().hex,
            data={},
        ).workflow_id

    def group(people: list[User]) -> list[tuple[int, uuid.UUID, cmd.Command]]:
        wids = [started(who) for who in people]
        timers = Timer.objects.filter(workflow_id__in=wids, kind="reminder")
        return [(t.tenant_id, t.workflow_id, cmd.TimerFired(t.key)) for t in timers]

    command_execute_many(group([alice, gina]))  # per-process caches
    mixed = group([alice, gina, alice, gina, gina])
    assert len({tenant for tenant, _, _ in mixed}) == 2
    assert trips(relay, lambda: command_execute_many(mixed)) == 2
    fired = [w for _, w, _ in mixed]
    assert WorkflowEvent.objects.filter(workflow_id__in=fired, type="ReminderSent").count() == 5


def test_refusals_cost_at_most_two_round_trips(relay: RoundTripCounter) -> None:
    alice, bob = User.objects.get(username="alice"), User.objects.get(username="bob")
    victor = User.objects.get(username="victor")
    for user in (alice, bob, victor):
        access.roles_of(user)  # as the API's token lookup reads them, with the token
    wf = start(alice)
    workflow_decide(user=bob, workflow_id=wf, decision="approve", request_id="once")
    events = WorkflowEvent.objects.filter(workflow_id=wf).count()

    again = {"user": bob, "workflow_id": wf, "decision": "approve", "request_id": "once"}
    assert fewest_trips(relay, lambda i: workflow_decide(**again)) <= 2  # a duplicate
    not_yours: dict[str, Any] = {"user": bob, "workflow_id": wf, "decision": "approve"}
    # finance's step now
    assert fewest_trips(relay, lambda i: workflow_decide(**not_yours, request_id=f"n{i}")) <= 2
    unreadable = {**not_yours, "user": victor}
    assert fewest_trips(relay, lambda i: workflow_decide(**unreadable, request_id=f"v{i}")) <= 2
    missing = {"user": bob, "decision": "approve", "request_id": "m"}
    assert fewest_trips(relay, lambda i: workflow_decide(**missing, workflow_id=uuid.uuid4())) <= 2
    assert WorkflowEvent.objects.filter(workflow_id=wf).count() == events


def test_a_decision_over_http_costs_three_with_the_token_lookup(
    relay: RoundTripCounter, api: Callable[[str], Any]
) -> None:
    alice, bob = api("alice"), api("bob")
    first = start_expense(alice, 4_500_000, subject="rt-1").json()["workflowId"]
    second = start_expense(alice, 4_500_000, subject="rt-2").json()["workflowId"]
    assert decide(bob, first, "approve", "warm").status_code == 200

    answers: list[Any] = []
    # the token, its user and their roles in one lookup; then the command's two
    assert trips(relay, lambda: answers.append(decide(bob, second, "approve", "h-1"))) == 3
    assert answers[0].status_code == 200, answers[0].content


def test_the_connection_health_check_runs_only_after_the_connection_sat_idle(
    relay: RoundTripCounter, api: Callable[[str], Any]
) -> None:
    """In production each request starts with Django's ``close_old_connections``, which
    asks for a health check (``SELECT 1``) of a kept connection; the test client skips
    that, so the test asks for it as it would. A connection that served a request a
    moment ago is not checked; one idle for longer than the setting is."""
    alice, bob = api("alice"), api("bob")
    ids = [start_expense(alice, 4_500_000, subject=f"hc-{i}").json()["workflowId"] for i in "abc"]

    def decision(workflow_id: str, request_id: str) -> int:
        connection.health_check_done = False  # what close_old_connections does
        answers: list[Any] = []
        n = trips(relay, lambda: answers.append(decide(bob, workflow_id, "approve", request_id)))
        assert answers[0].status_code == 200, answers[0].content
        return n

    decision(ids[0], "hc-warm")  # fills the per-process caches
    # The token lookup is prepared on the server on its sixth run on a connection, which
    # costs that one request a trip more (outside a pipeline psycopg waits for the
    # PREPARE): run it past that first.
    for _ in range(6):
        assert bob.get("/api/me/tasks").status_code == 200
    assert decision(ids[1], "hc-busy") == 3  # the token, then the command's two
    connection.approvals_used_at -= 5.0  # type: ignore[attr-defined]  # idle for 5 s
    assert decision(ids[2], "hc-idle") == 4  # SELECT 1 first
