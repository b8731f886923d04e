"""Fill a migrated, empty database with a realistic history, by COPY.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/approvals_scale_10m \\
        .venv/bin/python bench/scale_fill.py --events 10000000 [--tenants 40] [--procs 2]

Many organisations (``--tenants``, sized unevenly: the largest has about six times the
events of the smallest), each with its directory (employees, their managers, a VP and a
CEO, the finance and IT admin groups) and the demo workflow templates (approvals/demo,
their people renamed into the organisation), plus the demo organisation Acme itself
(``seed_demo``) so the benches' people exist. Workflows start over the last
``--months`` months and are driven by the engine itself (``decide`` then ``evolve``,
with the organisation's real directory): approved, rejected, sent back and resubmitted
or withdrawn, cancelled, activities that fail and are retried or fail for good (undone,
retried by an admin or cancelled), reminders and escalations fired by their timers. A
workflow whose next move would fall after the fill's moment stays running, with its
inbox rows and pending timers.

Each event is hashed by ``runtime.chain.event_hash`` (the command path's function), so
``verify_audit`` checks the filled history as it checks a live one; the decisions carry
request ids with the result and command fingerprint the command path records. The read
models are the rows ``runtime.rebuild`` derives from the events (``derive_commands``,
``derived_rows``): the workflows' search fields, the inbox, pending timers, open
activity attempts, participants and step visits, so ``rebuild_read_models --check``
finds nothing out of line. The events go into the parent table, which routes them to
their month's partition (created here for the past months with the periodic job's own
function). The statement-level triggers keep the inbox versions as COPY writes
(PostgreSQL fires them for COPY as for INSERT); the step visits go in uncounted, as the
command path writes them, for the analytics fold (runtime/rollup.py) to count.

The chain seals are written over every head at the end (``seal_audit``), and with
``--daily`` (the default) the daily seals of every day of the history that is over, one
per organisation and day, chained in order, by the periodic job's own function, so
``verify_audit`` checks a filled database as it checks a live one.

Not written: mails (the outbox of a history already sent), fired timers' and finished
attempts' rows (work-queue bookkeeping a rebuild does not derive either).

Why a bench script and not a management command: it writes events around the one
command path (runtime/commands.py: "Nothing else writes events"), which the product must
never ship as an operation. It refuses a database that already holds events.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import math
import multiprocessing as mp
import os
import random
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

ALREADY_FILLED = (
    "This database already holds workflow events: the generator fills only an empty, "
    "migrated database (it would otherwise mix generated and real histories). Drop and "
    "re-create it (dropdb, createdb, then manage.py migrate) to fill it again."
)
EVENTS_PER_WORKFLOW = 8.0  # a first guess to size the directories; measured as it runs
FIRST_NAMES = (
    "Aarav",
    "Priya",
    "Rohan",
    "Ananya",
    "Vikram",
    "Meera",
    "Arjun",
    "Kavya",
    "Ishaan",
    "Diya",
    "Rahul",
    "Sneha",
    "Karan",
    "Pooja",
    "Aditya",
    "Nisha",
    "Siddharth",
    "Lakshmi",
    "Farhan",
    "Zoya",
    "Gurpreet",
    "Harpreet",
    "Suresh",
    "Deepa",
    "Manoj",
    "Anjali",
)
LAST_NAMES = (
    "Sharma",
    "Iyer",
    "Reddy",
    "Nair",
    "Gupta",
    "Mehta",
    "Khan",
    "Singh",
    "Das",
    "Rao",
    "Joshi",
    "Menon",
    "Kapoor",
    "Bose",
    "Pillai",
)
DEPARTMENTS = ("sales", "marketing", "engineering", "support", "finance", "legal", "ops")
EXPENSES = (
    "Client dinner in Pune",
    "Flight to Bengaluru for the quarterly review",
    "Hotel in Mumbai, two nights",
    "Conference ticket",
    "Team offsite lunch",
    "Taxi to the airport",
    "Training course fees",
    "Mobile phone bill",
    "Printer ink and paper",
    "Visa fees for the Singapore trip",
)
ITEMS = {
    "IT_HARDWARE": ("Laptop, 16 GB", "Monitor, 27 inch", "Docking station", "Headset"),
    "SOFTWARE": ("Design tool licence", "IDE licence, one year", "Video calls, team plan"),
    "FURNITURE": ("Standing desk", "Office chair", "Whiteboard"),
    "SERVICES": ("Translation of the contract", "Security audit", "Catering for the launch"),
}
HOUR = 3600.0


# --- the directory ---------------------------------------------------------------------


@dataclass
class Org:
    """One organisation as the workers need it."""

    tenant_id: int
    prefix: str
    templates: dict[str, tuple[int, str, int]]  # key -> (id, key, version)
    employees: list[str]
    admin: str
    ids: dict[str, int] = field(default_factory=dict)  # username -> user id
    budget: int = 0  # events to write
    done_workflows: int = 0  # already written (a resumed fill)
    done_events: int = 0


def _people_count(events: int, tenants: int) -> int:
    per = events / max(tenants, 1) / EVENTS_PER_WORKFLOW
    return max(12, min(400, int(math.sqrt(per) * 2)))


def _template_doc(doc: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A demo template with its named people renamed into the organisation."""
    text = json.dumps(doc)
    for name in ("victor", "cora"):
        text = text.replace(f'"user": "{name}"', f'"user": "{prefix}{name}"')
    return dict(json.loads(text))


def make_orgs(n: int, people: int, weights: Sequence[float]) -> list[Org]:
    """The organisations, their people, groups and templates (the ORM; small)."""
    from approvals.demo import definitions, seed_demo
    from approvals.models import OrgGroup, Tenant, User
    from approvals.services.templates import workflow_template_publish

    seed_demo()
    orgs = []
    for k in range(n):
        prefix = f"s{k:02d}-"
        tenant = Tenant.objects.create(slug=f"scale-{k:02d}", name=f"Scale {k:02d} Pvt Ltd")
        rng = random.Random(k)

        def person(
            username: str, manager: User | None, tenant: Tenant = tenant, rng: Any = rng
        ) -> User:
            return User(
                username=username,
                tenant=tenant,
                first_name=rng.choice(FIRST_NAMES),
                last_name=rng.choice(LAST_NAMES),
                email=f"{username}@scale.example",
                password="!",
                manager=manager,
            )

        cora = person(f"{prefix}cora", None)
        cora.save()
        victor = person(f"{prefix}victor", cora)
        victor.save()
        managers = User.objects.bulk_create(
            [person(f"{prefix}mgr{i:03d}", victor) for i in range(max(2, people // 10))]
        )
        employees = User.objects.bulk_create(
            [person(f"{prefix}emp{i:04d}", managers[i % len(managers)]) for i in range(people)]
        )
        staff = User.objects.bulk_create(
            [
                person(f"{prefix}{name}", victor)
                for name in ("fin1", "fin2", "fin3", "it1", "it2", "olga")
            ]
        )
        finance = OrgGroup.objects.create(tenant=tenant, key="finance", name="Finance")
        finance.members.add(*staff[:3])
        it = OrgGroup.objects.create(tenant=tenant, key="it-admins", name="IT admins")
        it.members.add(*staff[3:5])
        templates = {}
        for doc in definitions():
            t = workflow_template_publish(tenant=tenant, definition=_template_doc(doc, prefix))
            templates[t.key] = (t.pk, t.key, t.version)
        everyone = [cora, victor, *managers, *employees, *staff]
        orgs.append(
            Org(
                tenant_id=tenant.pk,
                prefix=prefix,
                templates=templates,
                employees=[u.username for u in employees + managers[: len(managers) // 3]],
                admin=f"{prefix}olga",
                ids={u.username: u.pk for u in everyone},
            )
        )
    total = sum(weights)
    return [o for o in orgs if o] if total else orgs


def load_orgs(n: int) -> list[Org]:
    """The organisations an interrupted fill made, with what it wrote of each (each
    batch is one transaction: what is there is whole)."""
    from django.db.models import Count

    from approvals.models import Tenant, User, Workflow, WorkflowEvent, WorkflowTemplate

    orgs = []
    for k in range(n):
        prefix = f"s{k:02d}-"
        tenant = Tenant.objects.get(slug=f"scale-{k:02d}")
        people = dict(User.objects.filter(tenant=tenant).values_list("username", "pk"))
        managers = sorted(u for u in people if u.startswith(f"{prefix}mgr"))
        employees = sorted(u for u in people if u.startswith(f"{prefix}emp"))
        templates = {}
        for t in WorkflowTemplate.objects.filter(tenant=tenant).order_by("key", "version"):
            templates[t.key] = (t.pk, t.key, t.version)
        org = Org(
            tenant_id=tenant.pk,
            prefix=prefix,
            templates=templates,
            employees=employees + managers[: len(managers) // 3],
            admin=f"{prefix}olga",
            ids=people,
        )
        org.done_workflows = Workflow.objects.filter(tenant=tenant).count()
        org.done_events = (
            WorkflowEvent.objects.filter(tenant=tenant).aggregate(n=Count("id"))["n"] or 0
        )
        orgs.append(org)
    return orgs


NOTHING_TO_RESUME = (
    "Nothing to resume: this database has no organisations of an earlier fill "
    "(scale-00 ...). Run without --resume to fill it."
)


def tenant_weights(n: int) -> list[float]:
    """Uneven organisations: the k-th weighs 1/sqrt(k+1) (largest ~6x the smallest at 40)."""
    return [1 / math.sqrt(k + 1) for k in range(n)]


# --- one workflow, driven by the engine ------------------------------------------------


@dataclass
class Sim:
    """One workflow's history as the command path would have written it."""

    workflow_id: uuid.UUID
    template: tuple[int, str, int]
    subject_type: str
    subject_id: str
    submitter: str
    data: dict[str, Any]
    started: dt.datetime
    commands: list[tuple[dt.datetime, list[Any], str | None, Any, dict[str, Any] | None]] = field(
        default_factory=list
    )  # (time, events, actor username, role, request id and result)


def _at(seconds: float) -> dt.datetime:
    """A moment as PostgreSQL keeps it (microseconds, UTC)."""
    return dt.datetime.fromtimestamp(round(seconds, 6), tz=dt.UTC)


def _data(rng: random.Random, key: str) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.1:
        amount = rng.randrange(5_000, 100_000)  # under 1,000.00: approved at once
    elif roll < 0.85:
        amount = rng.randrange(100_000, 10_000_000)
    else:
        amount = rng.randrange(10_000_001, 200_000_000)  # the VP too
    if key == "expense-approval":
        return {
            "amountPaise": amount,
            "currency": "INR" if rng.random() < 0.9 else rng.choice(("USD", "EUR", "GBP")),
            "department": rng.choice(DEPARTMENTS),
            "description": rng.choice(EXPENSES),
        }
    category = rng.choice(tuple(ITEMS))
    return {
        "amountPaise": amount,
        "currency": "INR",
        "category": category,
        "item": rng.choice(ITEMS[category]),
    }


def simulate(
    org: Org, directory: Any, rng: random.Random, n: int, start: float, now_s: float
) -> Sim:
    """Start one workflow at ``start`` and drive it until it finishes or its next move
    would come after ``now_s``."""
    from approvals.definitions import definition_for
    from templates_engine import Context, State, decide, evolve, public_status
    from templates_engine import commands as cmd
    from templates_engine.errors import CommandRejected

    key = "expense-approval" if rng.random() < 0.65 else "purchase-request"
    template = org.templates[key]
    definition = definition_for(template[0])
    submitter = rng.choice(org.employees)
    sim = Sim(
        workflow_id=uuid.UUID(int=rng.getrandbits(128), version=4),
        template=template,
        subject_type="expense" if key == "expense-approval" else "purchase",
        subject_id=f"{'EXP' if key == 'expense-approval' else 'PR'}-{org.prefix}{n:07d}",
        submitter=submitter,
        data=_data(rng, key),
        started=_at(start),
    )
    state = State()

    def send(at: float, command: Any, actor: str | None, role: str, request: bool) -> bool:
        nonlocal state
        try:
            events = decide(
                definition, state, command, Context(now=at, rng=rng, directory=directory)
            )
        except CommandRejected:
            return False
        for e in events:
            state = evolve(state, e)
        if events:
            rid = (
                {
                    "id": uuid.UUID(int=rng.getrandbits(128)).hex,
                    "command": command,
                    "status": public_status(state),
                }
                if request
                else None
            )
            sim.commands.append((_at(at), events, actor, role, rid))
        return True

    t = start
    send(t, cmd.Start(sim.data, submitter), submitter, "submitter", False)
    for _ in range(60):
        if state.terminal:
            break
        wake = state.next_wake_at
        if state.activity is not None:
            a = state.activity
            at = max(t, a.not_before) + rng.uniform(0.2, 4.0)
            if at > now_s:
                break
            t = at
            roll = rng.random()
            failure = None
            if a.step == "reserve_budget" and not a.undo and roll < 0.03:
                failure = ("BudgetExceeded", "the cost centre's budget is spent", False)
            elif roll < 0.08:
                failure = ("ConnectionError", "the ERP did not answer", True)
            elif a.step == "order" and not a.undo and roll < 0.1:
                failure = ("SupplierRefused", "out of stock", False)
            if failure is not None:
                error, message, retryable = failure
                done: Any = cmd.ActivityFailed(
                    a.step,
                    a.attempt,
                    error,
                    message,
                    undo=a.undo,
                    retryable=retryable,
                    round=a.round,
                )
            else:
                done = cmd.ActivityCompleted(a.step, a.attempt, undo=a.undo, round=a.round)
            send(t, done, None, "system", False)
            continue
        if state.mode:
            holders = state.outstanding()
            delay = rng.lognormvariate(math.log(5 * HOUR), 1.1)
            if wake is not None and wake <= t + delay:
                if wake > now_s:
                    break
                timer = min(state.timers, key=lambda x: x.fire_at)
                t = max(t, wake)
                send(t, cmd.TimerFired(timer.key), None, "system", False)
                continue
            at = t + delay
            if at > now_s:
                break
            t = at
            if state.step == "submitter":  # sent back for changes
                if rng.random() < 0.75:
                    data = dict(state.data)
                    data["amountPaise"] = max(
                        5_000, int(data["amountPaise"] * rng.uniform(0.6, 1.0))
                    )
                    command = cmd.Decide(
                        state.submitter or submitter, "approve", "changed", data=data
                    )
                else:
                    command = cmd.Decide(state.submitter or submitter, "reject", "withdrawn")
                send(t, command, state.submitter, "approver", True)
                continue
            if not holders:
                # A step left open with nobody outstanding: its submitter withdraws it,
                # as people do, rather than leave it running for ever (a month with one
                # running workflow cannot be archived). Fills before the engine kept an
                # escalated "all" step finishable reached this after an escalation gave
                # both slots to one manager; the engine no longer leaves such a step.
                if not send(
                    t, cmd.Cancel(submitter, "nobody left to decide"), submitter, "submitter", True
                ):
                    break
                continue
            holder = rng.choice(holders)
            roll = rng.random()
            if roll < 0.02:
                send(t, cmd.Cancel(submitter, "no longer needed"), submitter, "submitter", True)
                continue
            decision, comment = "approve", ""
            if roll < 0.08:
                decision, comment = "reject", "not within the policy"
            elif roll < 0.13:
                decision, comment = "send_back", "please attach the receipt"
            command = cmd.Decide(holder.user, decision, comment, on_behalf_of=holder.on_behalf_of)
            if not send(t, command, holder.user, "approver", True):
                send(t, cmd.Decide(holder.user, "approve"), holder.user, "approver", True)
            continue
        if wake is not None:  # a wait, a retry's timer
            if wake > now_s:
                break
            timer = min(state.timers, key=lambda x: x.fire_at)
            t = max(t, wake)
            send(t, cmd.TimerFired(timer.key), None, "system", False)
            continue
        # Failed for good and waiting on an admin: retried, or cancelled.
        at = t + rng.lognormvariate(math.log(20 * HOUR), 0.8)
        if at > now_s:
            break
        t = at
        ok = rng.random() < 0.5 and send(
            t, cmd.RetryStep(org.admin, "the supplier has stock again"), org.admin, "admin", True
        )
        if not ok and not send(t, cmd.Cancel(org.admin, "given up"), org.admin, "admin", True):
            break
    return sim


# --- the rows --------------------------------------------------------------------------

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {}


@dataclass
class Rows:
    workflows: list[tuple[Any, ...]] = field(default_factory=list)
    events: list[tuple[Any, ...]] = field(default_factory=list)
    tasks: list[tuple[Any, ...]] = field(default_factory=list)
    timers: list[tuple[Any, ...]] = field(default_factory=list)
    attempts: list[tuple[Any, ...]] = field(default_factory=list)
    participants: list[tuple[Any, ...]] = field(default_factory=list)
    visits: list[tuple[Any, ...]] = field(default_factory=list)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def rows_of(sim: Sim, org: Org, directory: Any, out: Rows) -> int:
    """Append the workflow's rows (events hashed, read models derived); its event count."""
    from approvals.models import User, Workflow, history_month
    from approvals.runtime.analytics import visit_id
    from approvals.runtime.chain import HASH_V2, EventRow, event_hash_v2
    from approvals.runtime.commands import Actor, command_fingerprint
    from approvals.runtime.rebuild import derive_commands, derived_rows

    tid, key, version = sim.template
    month = history_month(sim.started)
    prev = ""
    seq = 0
    for at, events, actor, role, request in sim.commands:
        actor_id = org.ids.get(actor) if actor else None
        request_id = request["id"] if request is not None else None
        first = True
        for e in events:
            seq += 1
            behalf = getattr(e, "on_behalf_of", None)
            row = EventRow(
                workflow_id=sim.workflow_id,
                seq=seq,
                type=e.type,
                payload=e.to_dict(),
                request_id=request_id if first else None,
                actor_id=actor_id,
                role=role,
                on_behalf_of_id=org.ids.get(behalf) if isinstance(behalf, str) else None,
                created_at=at,
                prev_hash=prev,
            )
            if first and request is not None:
                fingerprint = command_fingerprint(
                    request["command"], Actor(User(pk=actor_id), role)
                )
                result = {
                    "status": request["status"],
                    "version": seq + len(events) - 1,
                    "command": fingerprint,
                }
            else:
                result = None
            # Format 2 (no ``recorded``): a generated history has no user rows' names
            # at hand; it verifies like any history written before format 3.
            prev = event_hash_v2(
                row, tenant_id=org.tenant_id, schema_version=e.schema_version, result=result
            )
            out.events.append(
                (
                    org.tenant_id,
                    sim.workflow_id,
                    seq,
                    e.type,
                    _json(row.payload),
                    row.request_id,
                    actor_id,
                    role,
                    row.on_behalf_of_id,
                    at,
                    row.prev_hash,
                    e.schema_version,
                    None if result is None else _json(result),
                    HASH_V2,
                    prev,
                    month,
                )
            )
            first = False
    d = derive_commands(
        tid, ((at, events) for at, events, *_ in sim.commands), version=seq, last_hash=prev
    )
    wf = Workflow(
        id=sim.workflow_id,
        tenant_id=org.tenant_id,
        template_id=tid,
        template_key=key,
        template_version=version,
        subject_type=sim.subject_type,
        subject_id=sim.subject_id,
        created_at=sim.started,
    )
    want = derived_rows(wf, d, directory)
    w = want["workflow"]
    updated = sim.commands[-1][0]
    out.workflows.append(
        (
            sim.workflow_id,
            org.tenant_id,
            tid,
            key,
            version,
            sim.subject_type,
            sim.subject_id,
            _json(w["data"]),
            org.ids[sim.submitter],
            w["status"],
            w["public_status"],
            w["current_step"],
            w["version"],
            _json(w["snapshot"]),
            False,
            w["last_hash"],
            w["summary"],
            w["amount_display"],
            sim.started,
            updated,
        )
    )
    for assignee, step, behalf, due, created, leaver, *facts in want["tasks"]:
        out.tasks.append(
            (org.tenant_id, assignee, sim.workflow_id, step, behalf, due, created, leaver, *facts)
        )
    for tkey, step, kind, fire_at in want["timers"]:
        out.timers.append((org.tenant_id, sim.workflow_id, tkey, step, kind, fire_at))
    for step, undo, rnd, attempt, activity, queue, ikey, not_before, timeout in want["attempts"]:
        out.attempts.append(
            (
                org.tenant_id,
                sim.workflow_id,
                step,
                undo,
                rnd,
                attempt,
                activity,
                queue,
                ikey,
                not_before,
                timeout,
                "",
            )
        )
    for user_id in want["participants"]:
        out.participants.append((org.tenant_id, sim.workflow_id, user_id))
    for entry, tkey, step, kind, entered, left, due, outcome, escalated, dims in want["visits"]:
        out.visits.append(
            (
                visit_id(sim.workflow_id, entry),
                org.tenant_id,
                sim.workflow_id,
                entry,
                tkey,
                step,
                kind,
                entered,
                left,
                due,
                outcome,
                escalated,
                dims,
            )
        )
    return seq


COLUMNS = {
    "approvals_workflow": (
        "id", "tenant_id", "template_id", "template_key", "template_version", "subject_type",
        "subject_id", "data", "submitter_id", "status", "public_status", "current_step",
        "version", "snapshot", "subject_exclusive", "last_hash", "summary", "amount_display",
        "created_at", "updated_at",
    ),
    "approvals_workflowevent": (
        "tenant_id", "workflow_id", "seq", "type", "payload", "request_id", "actor_id", "role",
        "on_behalf_of_id", "created_at", "prev_hash", "schema_version", "result",
        "hash_format", "hash", "history_month",
    ),
    "approvals_pendingtask": (
        "tenant_id", "assignee_id", "workflow_id", "step", "on_behalf_of", "due_at",
        "created_at", "handed_on_from", "template_key", "amount_minor", "requester_key",
        "search_text",
    ),
    "approvals_timer": ("tenant_id", "workflow_id", "key", "step", "kind", "fire_at"),
    "approvals_activityattempt": (
        "tenant_id", "workflow_id", "step", "undo", "round", "attempt", "activity", "queue",
        "idempotency_key", "not_before", "timeout_seconds", "outcome",
    ),
    "approvals_workflowparticipant": ("tenant_id", "workflow_id", "user_id"),
    "approvals_stepvisit": (
        "id", "tenant_id", "workflow_id", "entry", "template_key", "step", "kind",
        "entered_at", "left_at", "due_at", "outcome", "escalated", "dims",
    ),
}  # fmt: skip


def copy_rows(rows: Rows) -> None:
    """COPY one batch in the caller's transaction (workflows before what refers to them)."""
    from django.db import connection

    batches = (
        ("approvals_workflow", rows.workflows),
        ("approvals_workflowevent", rows.events),
        ("approvals_pendingtask", rows.tasks),
        ("approvals_timer", rows.timers),
        ("approvals_activityattempt", rows.attempts),
        ("approvals_workflowparticipant", rows.participants),
        ("approvals_stepvisit", rows.visits),
    )
    with connection.cursor() as cursor:
        raw = cursor.cursor  # psycopg 3's cursor under Django's wrapper
        for table, items in batches:
            if not items:
                continue
            with raw.copy(f"COPY {table} ({', '.join(COLUMNS[table])}) FROM STDIN") as copy:
                for item in items:
                    copy.write_row(item)


# --- the fill ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    org: Org
    seed: int
    start: float  # the span of start times, seconds since 1970
    end: float
    now: float
    batch: int


def fill_org(job: Job) -> tuple[int, int]:
    """Write one organisation's history, ``job.batch`` workflows per transaction;
    returns (workflows, events)."""
    from django.db import transaction

    from approvals.runtime import store
    from approvals.runtime.directory import VERSION_SQL, TenantDirectory

    org = job.org
    workflows, events = org.done_workflows, org.done_events
    # a resumed organisation draws from another seed (its first draws are written)
    rng = random.Random(job.seed if not workflows else f"{job.seed}:{workflows}")
    version = store.fetch_many([(VERSION_SQL, [])])[0][0][0]
    directory = TenantDirectory(org.tenant_id, version)
    rows = Rows()
    span = job.end - job.start
    while events < org.budget:
        start = job.start + span * (events / org.budget) + rng.uniform(0, 60)
        sim = simulate(org, directory, rng, workflows, start, job.now)
        events += rows_of(sim, org, directory, rows)
        workflows += 1
        if len(rows.workflows) >= job.batch:
            with transaction.atomic():
                copy_rows(rows)
            rows = Rows()
    if rows.workflows:
        with transaction.atomic():
            copy_rows(rows)
    return workflows - org.done_workflows, events - org.done_events


def _worker(jobs: list[Job], out: Any) -> None:
    import django
    from django.db import connections

    connections.close_all()
    django.setup()
    for job in jobs:
        out.put((job.org.tenant_id, *fill_org(job)))
    connections.close_all()


def already_filled() -> bool:
    from approvals.models import WorkflowEvent

    return WorkflowEvent.objects.exists()


class AlreadyFilled(Exception):
    pass


def ensure_partitions(months: int) -> list[str]:
    """The partitions of the last ``months`` months and the months ahead: the periodic
    job's function, run with the clock set back to the first month."""
    from approvals import clock
    from approvals.runtime.partitions import history_partitions_ensure, month_add

    today = clock.now().astimezone(dt.UTC)
    first = month_add(today.date().replace(day=1), -months)
    back = dt.datetime(first.year, first.month, 2, tzinfo=dt.UTC) - today
    with clock.shifted(back):
        return history_partitions_ensure(months_ahead=months + 3)


def event_bytes() -> tuple[int, int]:
    """(bytes on disk of the events table: partitions and their indexes, events)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(pg_total_relation_size(relid)), 0)"
            " FROM pg_partition_tree('approvals_workflowevent')"
        )
        size = int(cursor.fetchone()[0])
        cursor.execute("SELECT count(*) FROM approvals_workflowevent")
        return size, int(cursor.fetchone()[0])


@dataclass
class FillReport:
    tenants: int
    workflows: int
    events: int
    seconds: float
    bytes_per_event: float
    partitions_used: int
    written: int  # by this run (less than ``events`` when it resumed)

    @property
    def events_per_s(self) -> float:
        return self.written / self.seconds if self.seconds else 0.0


def fill(
    *,
    events: int,
    tenants: int = 40,
    months: int = 24,
    procs: int = 1,
    seed: int = 1,
    batch: int = 1000,
    log: Any = print,
    resume: bool = False,
    daily: bool = True,
) -> FillReport:
    """Fill the database Django is connected to; see the module doc. Raises
    AlreadyFilled when it holds events, unless ``resume``: then the organisations of an
    interrupted fill (with the same ``events`` and ``tenants``) are filled up to their
    share. ``daily``: also write the daily seals of every day of the history that is
    over (``daily_seals``)."""
    from django.core.management import call_command
    from django.db import connection, connections

    from approvals import clock
    from approvals.models import Tenant
    from approvals.runtime.partitions import history_partitions

    if resume and not Tenant.objects.filter(slug="scale-00").exists():
        raise AlreadyFilled(NOTHING_TO_RESUME)
    if not resume and already_filled():
        raise AlreadyFilled(ALREADY_FILLED)
    t0 = time.perf_counter()
    created = ensure_partitions(months)
    weights = tenant_weights(tenants)
    if resume:
        orgs = load_orgs(tenants)
    else:
        orgs = make_orgs(tenants, _people_count(events, tenants), weights)
    total = sum(weights)
    for org, w in zip(orgs, weights, strict=True):
        org.budget = max(1, round(events * w / total))
    now = clock.now().timestamp()
    first = now - months * 30.44 * 86400
    jobs = [Job(org, seed * 1000 + k, first, now - 60, now, batch) for k, org in enumerate(orgs)]
    log(
        f"{len(created)} partitions created; {len(orgs)} organisations set up in"
        f" {time.perf_counter() - t0:.1f} s; filling {events:,} events with {procs} process(es)"
    )
    t1 = time.perf_counter()
    workflows = written = 0
    if procs <= 1:
        for job in jobs:
            w, e = fill_org(job)
            workflows, written = workflows + w, written + e
    else:
        connections.close_all()
        ctx = mp.get_context("fork")
        queue = ctx.Queue()
        shares: list[list[Job]] = [[] for _ in range(procs)]
        for i, job in enumerate(sorted(jobs, key=lambda j: -j.org.budget)):
            shares[i % procs].append(job)
        children = [ctx.Process(target=_worker, args=(share, queue)) for share in shares]
        for child in children:
            child.start()
        for done in range(len(jobs)):
            tenant_id, w, e = queue.get()
            workflows, written = workflows + w, written + e
            took = time.perf_counter() - t1
            log(
                f"  organisation {tenant_id} done ({done + 1}/{len(jobs)}): {written:,} events"
                f" so far, {written / took:,.0f} events/s"
            )
        for child in children:
            child.join()
            if child.exitcode:
                raise RuntimeError(f"a fill process failed (exit {child.exitcode})")
    seconds = time.perf_counter() - t1
    resumed = sum(o.done_events for o in orgs)
    # The chain seals over every head, as the periodic job writes them (verify_audit
    # reports events older than two seal intervals that no seal covers).
    call_command("seal_audit", stdout=io.StringIO())
    if daily:
        daily_seals(log)
    # VACUUM as well as ANALYZE: a database in service is vacuumed by autovacuum (it sets
    # the visibility map that index-only scans read, and the rows' hint bits), and the
    # benches measure one in service, also where autovacuum is off (this machine's).
    # Inside a transaction (a test's), where VACUUM cannot run, ANALYZE alone.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE" if connection.in_atomic_block else "VACUUM (ANALYZE)")
    size, count = event_bytes()
    used = 0
    with connection.cursor() as cursor:
        for name in history_partitions():
            cursor.execute(f'SELECT EXISTS (SELECT 1 FROM "{name}")')
            used += bool(cursor.fetchone()[0])
    report = FillReport(
        len(orgs), workflows, count, seconds, size / max(count, 1), used, count - resumed
    )
    record(report, resumed=resume)
    return report


def daily_seals(log: Any = print) -> int:
    """One daily seal per organisation per day of its history that is over, as a live
    database has them: written by the periodic job's own function
    (``audit.daily_seal.daily_seals_due``), which seals each organisation's days in
    order from its first workflow's (or after its last seal, for a resumed fill), each
    chained to the day before, at most its catch-up limit of days per call; called
    until it has nothing left. Returns how many it wrote."""
    from approvals.audit.daily_seal import daily_seals_due, logger

    t0 = time.process_time()
    made = 0
    level = logger.level
    logger.setLevel("WARNING")  # a line per seal: thousands of days of history
    try:
        while written := len(daily_seals_due()):
            made += written
    finally:
        logger.setLevel(level)
    log(f"{made:,} daily seals written in {time.process_time() - t0:.1f} s of CPU")
    return made


def record(report: FillReport, *, resumed: bool) -> None:
    """Keep the fill's figures on the database itself (its comment), where bench/scale.py
    reads them for its table."""
    from django.db import connection

    figures = {
        "events": report.events,
        "written": report.written,
        "seconds": round(report.seconds, 1),
        "events_per_s": round(report.events_per_s),
        "bytes_per_event": round(report.bytes_per_event),
        "resumed": resumed,
    }
    name = connection.settings_dict["NAME"]
    with connection.cursor() as cursor:
        cursor.execute(f'COMMENT ON DATABASE "{name}" IS %s', [json.dumps(figures)])


def recorded() -> dict[str, Any]:
    """What ``record`` kept on this database ({} when nothing)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database"
            " WHERE datname = current_database()"
        )
        text = cursor.fetchone()[0]
    try:
        return dict(json.loads(text)) if text else {}
    except ValueError:
        return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--tenants", type=int, default=40)
    parser.add_argument("--months", type=int, default=24)
    parser.add_argument("--procs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1000, help="workflows per transaction")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on with a fill that was interrupted (same --events and --tenants)",
    )
    parser.add_argument(
        "--daily",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write the daily seals of every day of the history, one per organisation and "
        "day, as the periodic seal job does (default: on)",
    )
    args = parser.parse_args()
    if not os.environ.get("BENCH_DATABASE_URL"):
        sys.exit("Set BENCH_DATABASE_URL to the database to fill (never the app's own).")
    from _common import BENCH_SEAL_KEY, setup_django

    os.environ.setdefault("APPROVALS_AUDIT_SEAL_KEY", BENCH_SEAL_KEY)
    setup_django()
    try:
        r = fill(
            events=args.events,
            tenants=args.tenants,
            months=args.months,
            procs=args.procs,
            seed=args.seed,
            batch=args.batch,
            resume=args.resume,
            daily=args.daily,
        )
    except AlreadyFilled as exc:
        sys.exit(str(exc))
    print(
        f"filled {r.events:,} events ({r.tenants} organisations, {r.partitions_used} monthly"
        f" partitions used); this run wrote {r.written:,} events of {r.workflows:,} workflows"
        f" in {r.seconds:,.0f} s: {r.events_per_s:,.0f} events/s;"
        f" {r.bytes_per_event:,.0f} bytes per event (events table, partitions and indexes)"
    )


if __name__ == "__main__":
    main()
